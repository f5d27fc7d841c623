// Real Git repositories for agent tests, made in a temp dir with the system git: commit files, tag
// releases (lightweight or annotated), delete and re-point tags.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { atFileEnd } from "../../support/file-end";

const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
  HOME: tmpdir(),
};

export function gitSync(cwd: string, ...args: string[]): string {
  const r = Bun.spawnSync(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", ...args], { cwd, env: ENV });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

export interface TestRepo {
  dir: string;
  /** Writes files (path → text) and commits them; returns the commit id. */
  commit(files: Record<string, string>, message?: string): string;
  tag(name: string, opts?: { annotated?: boolean; at?: string }): void;
  deleteTag(name: string): void;
}

export function testRepo(name = "invoice-agent"): TestRepo {
  const root = mkdtempSync(join(tmpdir(), "agent-repo-"));
  atFileEnd(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, name);
  mkdirSync(dir);
  gitSync(dir, "init", "--quiet");
  return {
    dir,
    commit(files, message = "change") {
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      gitSync(dir, "add", "-A");
      gitSync(dir, "commit", "--quiet", "--allow-empty", "-m", message);
      return gitSync(dir, "rev-parse", "HEAD");
    },
    tag(tag, opts = {}) {
      const at = opts.at ?? "HEAD";
      if (opts.annotated) gitSync(dir, "tag", "-a", tag, "-m", `release ${tag}`, at);
      else gitSync(dir, "tag", tag, at);
    },
    deleteTag(tag) {
      gitSync(dir, "tag", "-d", tag);
    },
  };
}

/** A valid agent.yaml; `over` replaces top-level fields (given as YAML lines). */
export function manifest(over: { name?: string; description?: string; tools?: string[]; maxSteps?: number; model?: string; triggers?: string } = {}): string {
  return [
    `name: ${over.name ?? "Invoice helper"}`,
    `description: ${over.description ?? "Answers questions about invoices"}`,
    `model: ${over.model ?? "fake/agent"}`,
    "instructions: |",
    "  You help with invoices. Use the tools.",
    "inputs:",
    "  - {name: question, type: string, required: true}",
    `tools: [${(over.tools ?? ["workflows.lookup"]).join(", ")}]`,
    `maxSteps: ${over.maxSteps ?? 5}`,
    `triggers: ${over.triggers ?? "[api, manual]"}`,
    "",
  ].join("\n");
}
