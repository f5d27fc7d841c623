#!/usr/bin/env node
// npm's entry for `quotas` (package.json "bin"): runs the compiled executable shipped in dist/. It only
// starts the binary and passes arguments, stdio, signals and the exit code through.
import { spawn } from "node:child_process";
import { accessSync, chmodSync, constants, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const binary = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "quotas");

if (!existsSync(binary)) {
  process.stderr.write(
    `quotas: the compiled executable is missing (${binary}).\n` +
      "Build it from a checkout with `bun install && bun run build`, then run dist/quotas.\n",
  );
  process.exit(1);
}
try {
  accessSync(binary, constants.X_OK);
} catch {
  try {
    chmodSync(binary, 0o755); // some package tools drop the executable bit of non-bin files
  } catch {}
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
// The terminal sends Ctrl-C to both processes; the binary decides what it means. Signals sent to this
// wrapper alone are passed on.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]) {
  process.on(sig, () => {
    if (sig !== "SIGINT") child.kill(sig);
  });
}
child.on("error", (err) => {
  const hint = err.code === "ENOEXEC" || err.code === "EACCES" ? ` (this package ships a ${"linux"}-x64 binary; build one for ${process.platform}-${process.arch} with \`bun run build\`)` : "";
  process.stderr.write(`quotas: cannot start ${binary}: ${err.message}${hint}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
