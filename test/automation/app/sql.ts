// Raw statements on a test context's database, whichever backend it runs on: for seeding what the API
// cannot make quickly and for checking what a request left behind. `?` placeholders and SQL both
// dialects understand (`->`/`->>` for JSON, `CAST(COUNT(*) AS INTEGER)` for counts).
import type { AutomationContext } from "../../../src/automation/context";

type Arg = string | number | boolean | null;

export async function sql<T = Record<string, unknown>>(ctx: AutomationContext, text: string, ...args: Arg[]): Promise<T[]> {
  const { sqlite, pg } = ctx.db;
  if (sqlite) return sqlite.query(text).all(...(args.map((a) => (typeof a === "boolean" ? Number(a) : a)) as never[])) as T[];
  let n = 0;
  return (await pg!.unsafe(text.replace(/\?/g, () => `$${++n}`), args)) as T[];
}

/** `SELECT CAST(COUNT(*) AS INTEGER) AS n FROM <from>`: one number. */
export async function count(ctx: AutomationContext, from: string, ...args: Arg[]): Promise<number> {
  return (await sql<{ n: number }>(ctx, `SELECT CAST(COUNT(*) AS INTEGER) AS n FROM ${from}`, ...args))[0].n;
}

/** Runs `statements` in one transaction with foreign keys unchecked (rewriting ids as an older server wrote them). */
export async function withoutForeignKeys(ctx: AutomationContext, statements: [string, ...Arg[]][]): Promise<void> {
  const { sqlite, pg } = ctx.db;
  if (sqlite) {
    sqlite.run("PRAGMA foreign_keys = OFF");
    try {
      sqlite.transaction(() => {
        for (const [text, ...args] of statements) sqlite.query(text).run(...(args as never[]));
      })();
    } finally {
      sqlite.run("PRAGMA foreign_keys = ON");
    }
    return;
  }
  await pg!.begin(async (tx) => {
    await tx`SET LOCAL session_replication_role = replica`;
    for (const [text, ...args] of statements) {
      let n = 0;
      await tx.unsafe(text.replace(/\?/g, () => `$${++n}`), args);
    }
  });
}
