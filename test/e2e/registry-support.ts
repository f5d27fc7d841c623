// A real npm registry on loopback for the publish-and-install tests: Verdaccio 6.8.0 from npm (6.10
// wants Node 22; its node-fetch must be overridden to 2.7.0), installed once into dist/.cache/ (like
// the executables ensureBuilt compiles), started per test file on a port the OS picks.
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root, start, type Proc } from "./support";

const VERDACCIO = "6.8.0";
const cacheDir = join(root, "dist/.cache", `verdaccio-${VERDACCIO}`);
let installing: Promise<string> | undefined;

/** npm's settings for the tests: quiet, no audit/fund/update notices, a cache of the test's own. */
export const npmEnv = (dir: string): Record<string, string> => ({
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
  npm_config_audit: "false",
  npm_config_loglevel: "error",
  npm_config_cache: join(dir, "npm-cache"),
});

export async function sh(cmd: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}) {
  const p = Bun.spawn(cmd, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

/** Installs Verdaccio into dist/.cache/ once (a temp dir, renamed when complete); returns its module dir. */
export function ensureVerdaccio(): Promise<string> {
  return (installing ??= (async () => {
    const mod = join(cacheDir, "node_modules/verdaccio");
    if (existsSync(mod)) return mod;
    const tmp = `${cacheDir}.${process.pid}.tmp`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    writeFileSync(join(tmp, "package.json"), JSON.stringify({ private: true, dependencies: { verdaccio: VERDACCIO }, overrides: { "node-fetch": "2.7.0" } }));
    const r = await sh(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: tmp, env: { npm_config_update_notifier: "false" } });
    if (r.code !== 0) {
      rmSync(tmp, { recursive: true, force: true });
      throw new Error(`npm install verdaccio@${VERDACCIO} failed:\n${r.stderr}`);
    }
    // Another test process may have finished first (and may be running its Verdaccio): keep its copy.
    try {
      renameSync(tmp, cacheDir);
    } catch {
      rmSync(tmp, { recursive: true, force: true });
    }
    if (!existsSync(mod)) throw new Error(`verdaccio is not in ${cacheDir} after installing it`);
    return mod;
  })());
}

export interface Registry {
  url: string;
  /** An npmrc for publishing and installing: this registry and a token of a user created on it. */
  npmrc: string;
  proc: Proc;
}

/** Starts Verdaccio with its storage in `dir`: anyone may read, a logged-in user may publish. */
export async function startRegistry(dir: string): Promise<Registry> {
  const mod = await ensureVerdaccio();
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    `storage: ${join(dir, "storage")}
auth:
  htpasswd:
    file: ${join(dir, "htpasswd")}
uplinks: {}
packages:
  '@*/*': { access: $all, publish: $authenticated }
  '**': { access: $all, publish: $authenticated }
# one platform package holds a ~110 MB executable
max_body_size: 500mb
log: { type: stdout, format: pretty, level: error }
`,
  );
  // Verdaccio's own listen setting cannot report a port picked by the OS: start it through its API.
  const script = join(dir, "start.cjs");
  writeFileSync(
    script,
    `require(${JSON.stringify(mod)}).runServer(${JSON.stringify(config)}).then(
  (s) => s.listen(0, "127.0.0.1", () => console.log("verdaccio listening on http://127.0.0.1:" + s.address().port)),
  (err) => { console.error(err); process.exit(1); });
`,
  );
  const proc = start(["node", script], { cwd: dir });
  const until = Date.now() + 60_000;
  let url: string | undefined;
  while (!url) {
    url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(proc.output())?.[1];
    if (url) break;
    if (proc.proc.exitCode !== null || Date.now() > until) {
      await proc.kill("SIGKILL");
      throw new Error(`verdaccio did not start:\n${proc.output()}`);
    }
    await Bun.sleep(50);
  }
  const res = await fetch(`${url}/-/user/org.couchdb.user:ci`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "ci", password: "ci-password-1" }),
  });
  const { token } = (await res.json()) as { token?: string };
  if (!token) throw new Error(`verdaccio refused the test user: HTTP ${res.status}`);
  const npmrc = join(dir, "npmrc");
  writeFileSync(npmrc, `registry=${url}/\n//${url.slice("http://".length)}/:_authToken=${token}\n`);
  return { url, npmrc, proc };
}
