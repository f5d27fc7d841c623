// What the quotas benchmarks share: the compiled reference program and a HOME with a warm cache.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "../e2e/support";
import { allProviders, fakeProvider, homeWithCredentials, runEnv, type Fake } from "../quotas/fakes";
import type { TempHome } from "../quotas/helpers";

/** The reference: a compiled Bun program, same build flags as ours, that prints one line. Returns its path. */
export function compileHello(work: string): string {
  writeFileSync(join(work, "hello.ts"), 'console.log("Claude 58/100 | Codex 12/100");\n');
  const hello = join(work, "hello");
  const build = Bun.spawnSync([process.execPath, "build", "--compile", "--target", "bun", "--minify-whitespace", "--minify-syntax", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig", join(work, "hello.ts"), "--outfile", hello], { cwd: root });
  if (build.exitCode !== 0) throw new Error(build.stderr.toString());
  return hello;
}

/**
 * A HOME whose cache holds all twelve providers (one real refresh against fake servers, which also
 * writes the pre-rendered statusline files) and a fresh update check: the prompt's everyday case.
 * `env` still points at the (stopped) fakes, so nothing reaches the network.
 */
export async function warmHome(bin: string): Promise<{ h: TempHome; env: Record<string, string> }> {
  const h = homeWithCredentials();
  const fakes: Fake[] = allProviders.map((p) => fakeProvider(p));
  const env = runEnv(h, fakes);
  await Bun.spawn([bin, "--json"], { env, stdout: "ignore", stderr: "inherit" }).exited;
  h.write(".cache/quotas/update.json", { checked_at: new Date().toISOString(), current: "0.0.0", latest: "0.0.0" });
  for (const f of fakes) f.stop();
  return { h, env };
}
