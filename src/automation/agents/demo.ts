// `--demo`: a demo agent whose repository is a local bare Git repo under the data dir with two release
// tags (v1.0.0 greets, v1.1.0 also totals invoices), registered in the demo tenant as
// agents.demo-assistant. Idempotent across restarts and across instances starting together on one
// database (one registers it, the others take it); skipped with a logged note when git is missing.
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DomainError } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import { git, GitMissing } from "./git";
import { MANIFEST_FILE } from "./manifest";
import { addAgent, agentDeps } from "./service";

export const DEMO_AGENT = "demo-assistant";

const manifest = (tools: string[], extra: string) => `name: Demo assistant
description: Answers with the demo workflows as tools (needs --models)
instructions: |
  You are the demo assistant of a self-hosted automation server. ${extra}
  Answer in one short sentence.
inputs:
  - {name: question, type: string, required: true}
tools: [${tools.join(", ")}]
maxSteps: 6
triggers: [api, manual]
`;

const RELEASES = [
  { tag: "v1.0.0", yaml: manifest(["workflows.hello"], "Greet people with the hello tool.") },
  { tag: "v1.1.0", yaml: manifest(["workflows.hello", "workflows.invoice-summary"], "Greet people with the hello tool; total invoices with invoice-summary.") },
];

async function must(args: string[]): Promise<void> {
  const r = await git(args);
  if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.trim()}`);
}

/** Builds the bare repository with its two tags (atomically: a half-built one is never left behind). */
async function buildRepo(bare: string): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "demo-agent-"));
  const id = ["-c", "user.name=automation-server demo", "-c", "user.email=demo@localhost", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"];
  try {
    await must(["-C", work, "init", "--quiet"]);
    for (const r of RELEASES) {
      writeFileSync(join(work, MANIFEST_FILE), r.yaml);
      await must(["-C", work, "add", MANIFEST_FILE]);
      await must(["-C", work, ...id, "commit", "--quiet", "-m", `Demo assistant ${r.tag}`]);
      await must(["-C", work, ...id, "tag", r.tag]);
    }
    // Unique per build: two contexts of one process (or two processes) may build into one data dir at once.
    const tmp = `${bare}.${process.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`;
    await must(["clone", "--bare", "--quiet", work, tmp]);
    await must(["-C", tmp, "remote", "remove", "origin"]);
    try {
      renameSync(tmp, bare);
    } catch (err) {
      // Another instance sharing the data dir built it first: theirs is the same repository.
      rmSync(tmp, { recursive: true, force: true });
      if (!existsSync(bare)) throw err;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Creates and registers the demo agent once; returns its alias, or a note why it was skipped. */
export async function seedDemoAgent(ctx: AutomationContext, tenantId: string): Promise<{ agent?: string; note?: string }> {
  if (await ctx.storage.automations.bySlug(tenantId, "agent", DEMO_AGENT)) return { agent: `agents.${DEMO_AGENT}` };
  if (ctx.config.dataDir === ":memory:") return { note: "the demo agent needs a data dir" };
  try {
    const bare = join(ctx.config.dataDir, "demo-agent.git");
    if (!existsSync(bare)) await buildRepo(bare);
    await addAgent(agentDeps(ctx), tenantId, { repo: bare, slug: DEMO_AGENT });
    return { agent: `agents.${DEMO_AGENT}` };
  } catch (err) {
    // Instances starting together on one database: the one that registered it first wins, the others take it.
    if (err instanceof DomainError && err.code === "already_exists" && (await ctx.storage.automations.bySlug(tenantId, "agent", DEMO_AGENT))) {
      return { agent: `agents.${DEMO_AGENT}` };
    }
    const note = err instanceof GitMissing ? "demo agent skipped: git is not installed or not on PATH" : `demo agent skipped: ${(err as Error).message}`;
    ctx.log.warn(note);
    return { note };
  }
}
