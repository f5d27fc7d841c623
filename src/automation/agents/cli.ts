// `agents add --tenant T --repo PATH_OR_URL [--slug SLUG]` registers a Git repository as an agent and
// reads its releases; `agents sync AGENT --tenant T` does what POST /automations/{id}/sync does.
import { join } from "node:path";
import { systemClock } from "../../kernel/clock";
import { helpText, parseFlags } from "../../kernel/config";
import { UsageError } from "../../kernel/errors";
import { askText, asCliError, openAdminStorage, printJson } from "../admin";
import { storageFlags } from "../config";
import { requireTenant } from "../tenancy/service";
import { addAgent, syncAgent, type AgentDeps } from "./service";

const common = {
  tenant: { type: "string", value: "SLUG", help: "tenant slug or id" },
  ...storageFlags,
  json: { type: "boolean", help: "print one JSON object" },
  help: { type: "boolean", short: "h", help: "show this help" },
} as const;

const addFlags = {
  repo: { type: "string", value: "PATH_OR_URL", help: "Git repository: a local path (read in place) or a URL (mirrored under the data dir)" },
  slug: { type: "string", value: "SLUG", help: "agent slug, addressed as agents.<slug> (default: the repository's name)" },
  ...common,
} as const;

const USAGE = `Usage: automation-server agents add --tenant SLUG --repo PATH_OR_URL [--slug SLUG] [--json]
       automation-server agents sync AGENT --tenant SLUG [--json]

An agent is a Git repository whose release tags (v1.2.0) carry an agent.yaml manifest. Needs the
system git.`;

export async function agentsCommand(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) {
    process.stdout.write(helpText(USAGE, addFlags));
    if (sub === undefined) throw new UsageError("missing subcommand: agents add|sync");
    return;
  }
  if (sub === "add") return agentsAdd(rest);
  if (sub === "sync") return agentsSync(rest);
  throw new UsageError(`unknown command "agents ${sub}"`);
}

/** Runs `fn` over the data dir's database for the tenant of `--tenant` (asked for when missing). */
async function forTenant(values: { tenant?: string; "data-dir": string }, fn: (deps: AgentDeps, tenantId: string) => Promise<void>): Promise<void> {
  const tenantRef = values.tenant ?? (await askText("tenant", "Tenant slug"));
  const db = await openAdminStorage(values);
  const deps: AgentDeps = { automations: db.storage.automations, agents: db.storage.agents, clock: systemClock, mirrorsDir: join(values["data-dir"], "agents") };
  try {
    await fn(deps, (await requireTenant(db.storage.tenancy, tenantRef)).id);
  } catch (err) {
    asCliError(err);
  } finally {
    await db.close();
  }
}

async function agentsAdd(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, addFlags);
  if (values.help) return void process.stdout.write(helpText(USAGE, addFlags));
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const repo = values.repo ?? (await askText("repo", "Git repository (path or URL)"));
  await forTenant(values, async (deps, tenantId) => {
    const r = await addAgent(deps, tenantId, { repo, slug: values.slug });
    const a = r.agent;
    if (values.json) return printJson({ id: a.id, slug: a.slug, name: a.name, version: a.version, release: r.release, warnings: r.warnings });
    process.stdout.write(`registered agent agents.${a.slug} (${a.id})${r.release ? ` at release ${r.release.tag}` : ", no release yet"}\n`);
    for (const w of r.warnings) process.stdout.write(`warning: ${w}\n`);
  });
}

async function agentsSync(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, common);
  if (values.help) return void process.stdout.write(helpText(USAGE, common));
  if (positionals.length !== 1) throw new UsageError("agents sync takes exactly one AGENT (agents.<slug> or agt_ id)");
  const ref = positionals[0].includes(".") || positionals[0].startsWith("agt_") ? positionals[0] : `agents.${positionals[0]}`;
  await forTenant(values, async (deps, tenantId) => {
    const r = await syncAgent(deps, tenantId, ref);
    if (values.json) return printJson(r);
    process.stdout.write(`synced agents.${r.automation.slug} to release ${r.release.tag} (${r.release.commit.slice(0, 12)})\n`);
    for (const w of r.warnings) process.stdout.write(`warning: ${w}\n`);
  });
}
