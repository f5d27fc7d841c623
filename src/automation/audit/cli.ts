// `audit export|verify`: the audit trail from a shell, with --data-dir / --db like the other admin
// commands. Export writes NDJSON (one entry a line, oldest first) to stdout; verify walks each chain
// and exits 1 naming the first entry changed, removed or reordered.
import { helpText, parseFlags } from "../../kernel/config";
import { FatalError, UsageError } from "../../kernel/errors";
import { asCliError, openAdminStorage, printJson } from "../admin";
import { storageFlags } from "../config";

type AutomationStorage = Awaited<ReturnType<typeof openAdminStorage>>["storage"];
import { exportAudit, isoBound, verifyChain, type Verdict } from "./service";
import { NO_TENANT } from "./store";

const common = {
  ...storageFlags,
  help: { type: "boolean", short: "h", help: "show this help" },
} as const;

const exportFlags = {
  tenant: { type: "string", value: "SLUG", help: "the tenant (slug or id) whose entries to export" },
  since: { type: "string", value: "TIME", help: "entries at or after this ISO 8601 time (e.g. 2026-01-01 or 2026-01-01T00:00:00Z)" },
  until: { type: "string", value: "TIME", help: "entries before this ISO 8601 time (default: up to now)" },
  ...common,
} as const;

const verifyFlags = {
  tenant: { type: "string", value: "SLUG", help: "only this tenant's chain (default: every chain, the one of entries without a tenant too)" },
  json: { type: "boolean", help: "print one JSON object per chain" },
  ...common,
} as const;

const USAGE = `Usage: automation-server audit export --since TIME [--until TIME] --tenant SLUG
       automation-server audit verify [--tenant SLUG] [--json]

The audit trail: every state-changing API request and every sign-in, one hash chain per tenant
(docs/automation/people.md, "Audit trail"). export writes NDJSON to stdout; verify checks the chains
and names the first entry changed, removed or reordered (exit 1).`;

export async function auditCommand(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) {
    process.stdout.write(helpText(USAGE, common));
    if (sub === undefined) throw new UsageError("missing subcommand: audit export|verify");
    return;
  }
  switch (sub) {
    case "export":
      return exportCommand(rest);
    case "verify":
      return verifyCommand(rest);
    default:
      throw new UsageError(`unknown command "audit ${sub}"`);
  }
}

async function withStorage<T>(values: { "data-dir": string; db?: string }, body: (s: AutomationStorage) => Promise<T>): Promise<T> {
  const db = await openAdminStorage(values);
  try {
    return await body(db.storage);
  } catch (err) {
    return asCliError(err);
  } finally {
    await db.close();
  }
}

async function tenantKey(storage: AutomationStorage, ref: string): Promise<string> {
  const t = await storage.tenancy.findTenant(ref);
  if (!t) throw new FatalError(`no tenant "${ref}"`);
  return t.id;
}

function bound(raw: string | undefined, flag: string): string | undefined {
  if (raw === undefined) return undefined;
  try {
    return isoBound(raw, flag);
  } catch {
    throw new UsageError(`--${flag} must be an ISO 8601 date or time, e.g. 2026-01-31 or 2026-01-31T00:00:00Z (got ${raw})`);
  }
}

async function exportCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, exportFlags);
  if (values.help) return void process.stdout.write(helpText("Usage: automation-server audit export --since TIME [--until TIME] --tenant SLUG\n\nWrites the tenant's audit entries in [since, until) to stdout as NDJSON, oldest first.", exportFlags));
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (values.tenant === undefined) throw new UsageError("--tenant is required");
  if (values.since === undefined) throw new UsageError("--since is required (e.g. --since 2026-01-01)");
  const since = bound(values.since, "since");
  const until = bound(values.until, "until");
  await withStorage(values, async (storage) => {
    const key = await tenantKey(storage, values.tenant!);
    let lines: string[] = [];
    for await (const e of exportAudit(storage.audit, key, since, until)) {
      lines.push(JSON.stringify(e));
      if (lines.length >= 500) {
        process.stdout.write(lines.join("\n") + "\n");
        lines = [];
      }
    }
    if (lines.length) process.stdout.write(lines.join("\n") + "\n");
  });
}

const chainName = (key: string) => (key === NO_TENANT ? "the chain without tenant" : `tenant ${key}`);

async function verifyCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, verifyFlags);
  if (values.help) return void process.stdout.write(helpText("Usage: automation-server audit verify [--tenant SLUG] [--json]\n\nWalks each audit chain from its anchor to its head. Exit 0 with the count when every chain holds;\nexit 1 naming the first entry changed, removed or reordered.", verifyFlags));
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const verdicts = await withStorage(values, async (storage): Promise<Verdict[]> => {
    const keys = values.tenant !== undefined ? [await tenantKey(storage, values.tenant)] : await storage.audit.chains();
    const out: Verdict[] = [];
    for (const key of keys) out.push(await verifyChain(storage.audit, key));
    return out;
  });
  if (values.json) for (const v of verdicts) printJson({ ...v, tenantId: v.tenantKey === NO_TENANT ? null : v.tenantKey, tenantKey: undefined });
  const broken = verdicts.filter((v) => !v.ok);
  const total = verdicts.reduce((n, v) => n + v.entries, 0);
  if (broken.length === 0) {
    if (!values.json) process.stdout.write(`audit trail intact: ${total} entr${total === 1 ? "y" : "ies"} in ${verdicts.length} chain${verdicts.length === 1 ? "" : "s"} verified\n`);
    return;
  }
  const lines = broken.map((v) => (v.ok ? "" : `${chainName(v.tenantKey)}: entry ${v.entryId ?? "(missing)"} at position ${v.position}: ${v.problem}`));
  throw new FatalError(`audit trail broken: ${lines.join("; ")}`);
}
