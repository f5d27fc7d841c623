// The system `git`, the only way agents read their repositories. A local path is read in place (the
// operator's repository is the source of truth); a URL is mirrored under the data dir and fetched at
// every sync, so a deleted remote tag disappears here too.
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { DomainError, Invalid, NotFound } from "../../kernel/errors";

/** git is not installed or not on PATH: agents cannot work without it. */
export class GitMissing extends DomainError {
  constructor() {
    super("unavailable", "git is not installed or not on PATH; agents read their releases with the system git (install git and retry)", { code: "git_missing" });
  }
}

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Never prompts (no terminal on a server), reads repositories owned by other users. */
const GIT_ENV = { GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "echo", LC_ALL: "C" };

/**
 * Variables that make git act on another repository than the one named (`git rev-parse
 * --local-env-vars`). A server started from a git hook or under `git bisect run` inherits GIT_DIR:
 * with it, the demo's `git -C <dir> init` re-initialised the enclosing repository and its commits and
 * tags went there. They are never passed on.
 */
const REPOSITORY_VARS = new Set([
  "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR",
  "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE",
  "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
]);

function gitEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(process.env)) if (!REPOSITORY_VARS.has(k)) env[k] = v;
  return { ...env, ...GIT_ENV };
}

export async function git(args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<GitResult> {
  let proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    proc = Bun.spawn(["git", "-c", "safe.directory=*", ...args], {
      cwd: opts.cwd,
      env: gitEnv(),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      timeout: opts.timeoutMs ?? 120_000,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new GitMissing();
    throw err;
  }
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** URLs (`https://`, `ssh://`, `file://`, `git@host:path`) are mirrored; anything else is a local path. */
export function isRemote(repo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[\w.-]+@[\w.-]+:/.test(repo);
}

/** The repository as stored: a URL verbatim, a path made absolute. */
export function normalizeRepo(repo: string): string {
  const r = repo.trim();
  if (!r) throw Invalid("--repo must not be empty", { field: "repo" });
  return isRemote(r) ? r : isAbsolute(r) ? r : resolve(r);
}

const firstLine = (s: string) => s.trim().split("\n").filter(Boolean).pop() ?? "";

/** Checks a local path is a Git repository (working tree or bare). */
export async function checkLocalRepo(path: string): Promise<void> {
  if (!existsSync(path)) throw NotFound(`repository ${path} does not exist`, { field: "repo", code: "repo_not_found" });
  const r = await git(["-C", path, "rev-parse", "--show-prefix"]);
  // A folder inside a repository is not one: tags and agent.yaml belong to the repository's top.
  if (r.code !== 0 || r.stdout.trim() !== "") throw Invalid(`${path} is not a Git repository (or not its top folder)`, { field: "repo", code: "not_a_repository" });
}

/** Clones a bare mirror of `url` into `dir` (atomically: a failed clone leaves nothing behind). */
export async function cloneMirror(url: string, dir: string): Promise<void> {
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  const r = await git(["clone", "--mirror", "--quiet", "--", url, tmp]);
  if (r.code !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw NotFound(`cannot clone ${url}: ${firstLine(r.stderr)}`, { field: "repo", code: "repo_unreachable" });
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
}

/** Brings a mirror up to date; tags deleted upstream are pruned. */
export async function fetchMirror(dir: string): Promise<void> {
  const r = await git(["-C", dir, "fetch", "--quiet", "--prune", "--prune-tags", "--force", "origin"]);
  if (r.code !== 0) throw NotFound(`cannot fetch the agent repository: ${firstLine(r.stderr)}`, { code: "repo_unreachable" });
}

export interface Tag {
  name: string;
  /** The commit the tag points at (annotated tags peeled). */
  commit: string;
}

export async function listTags(dir: string): Promise<Tag[]> {
  const r = await git(["-C", dir, "for-each-ref", "--format=%(refname:strip=2)%09%(objectname)%09%(*objectname)", "refs/tags"]);
  if (r.code !== 0) throw NotFound(`cannot read the agent repository: ${firstLine(r.stderr)}`, { code: "repo_unreachable" });
  return r.stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [name, object, peeled] = line.split("\t");
      return { name, commit: peeled || object };
    });
}

/** A file's text at a commit, or null when the commit has no such file. */
export async function readAt(dir: string, commit: string, path: string): Promise<string | null> {
  const r = await git(["-C", dir, "cat-file", "blob", `${commit}:${path}`]);
  return r.code === 0 ? r.stdout : null;
}
