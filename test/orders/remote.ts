// Talking to a running order-server over HTTP (end-to-end tests and the benchmark share this).
export const DEMO_CLIENT = { id: "iDXnf8809V1Tjo6zgsXc", secret: "R85vuXvGCarh5jQOPMgN" };

export interface Remote {
  base: string;
  // biome-ignore lint: arbitrary JSON
  call(method: string, path: string, opts?: { token?: string; json?: unknown }): Promise<{ status: number; headers: Headers; body: any }>;
  register(username: string, userType: "Customer" | "Performer", password?: string): Promise<{ id: number }>;
  token(username: string, password?: string, client?: { id: string; secret: string }): Promise<string>;
}

export function remote(base: string): Remote {
  const call: Remote["call"] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.json !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(base + path, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json) });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    return { status: res.status, headers: res.headers, body };
  };
  return {
    base,
    call,
    async register(username, userType, password = "pass") {
      const r = await call("POST", "/users", { json: { username, password, userType } });
      if (r.status !== 201) throw new Error(`register ${username}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async token(username, password = "pass", client = DEMO_CLIENT) {
      const res = await fetch(`${base}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "password", username, password, client_id: client.id, client_secret: client.secret }),
      });
      const body = (await res.json()) as { access_token?: string };
      if (res.status !== 200 || !body.access_token) throw new Error(`token ${username}: ${res.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
  };
}

/** Runs one query on a database directly (a bun:sqlite Database or a Bun SQL client adapted by `sqlQuery`). */
export type Query = (sql: string) => Promise<Record<string, unknown>[]>;

/** A bun:sqlite Database as a Query. */
export function sqliteQuery(db: import("bun:sqlite").Database): Query {
  return async (sql) => db.query(sql).all() as Record<string, unknown>[];
}

/** A Bun SQL client (PostgreSQL) as a Query. */
export function sqlQuery(client: import("bun").SQL): Query {
  return async (sql) => [...(await client.unsafe(sql))] as Record<string, unknown>[];
}

/** The money invariants, checked directly on the database (SQL both backends speak). Returns the problems found. */
export async function invariantProblems(query: Query): Promise<string[]> {
  const problems: string[] = [];
  const [row] = await query(
    `SELECT (SELECT COALESCE(SUM(money),0) FROM users) AS balances,
            (SELECT COALESCE(SUM(amount),0) FROM ledger WHERE kind = 'opening') AS opening,
            (SELECT COALESCE(SUM(amount),0) FROM ledger WHERE user_id IS NULL) AS platform`,
  );
  // PostgreSQL returns sums of int8 as numeric strings.
  const [balances, opening, platform] = [row.balances, row.opening, row.platform].map(Number);
  if (balances + platform !== opening) problems.push(`balances ${balances} + commission ${platform} != starting ${opening}`);
  const unexplained = await query("SELECT u.id FROM users u LEFT JOIN ledger l ON l.user_id = u.id GROUP BY u.id HAVING u.money <> COALESCE(SUM(l.amount),0)");
  if (unexplained.length) problems.push(`ledger does not explain users ${JSON.stringify(unexplained)}`);
  const partial = await query(
    "SELECT o.id FROM orders o LEFT JOIN ledger l ON l.order_id = o.id GROUP BY o.id HAVING (o.status = 3 AND (COUNT(l.id) <> 4 OR SUM(l.amount) <> 0)) OR (o.status <> 3 AND COUNT(l.id) > 0)",
  );
  if (partial.length) problems.push(`partial transfers on orders ${JSON.stringify(partial)}`);
  const counts = await query("SELECT c.status FROM order_counts c WHERE c.n <> (SELECT COUNT(*) FROM orders o WHERE o.status = c.status)");
  if (counts.length) problems.push(`order_counts out of step: ${JSON.stringify(counts)}`);
  return problems;
}
