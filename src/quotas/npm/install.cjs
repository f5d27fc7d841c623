"use strict";
// postinstall: puts this platform's executable where the `quotas` command points (bin/quotas, a hard
// link, else a copy), so the command is the executable itself. Never fails the install: when anything
// is off, bin/quotas stays the Node launcher, which reports the problem when the command runs.
const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");

function main() {
  // npm's Windows shims run `node bin/quotas`: there the launcher stays.
  if (process.platform === "win32") return;
  let exe;
  try {
    exe = require("./lib/platform.cjs").executable();
  } catch (err) {
    process.stderr.write(`quotas: ${err.message}\n`);
    return;
  }
  const check = spawnSync(exe, ["--version"], { encoding: "utf8" });
  if (check.status !== 0) {
    process.stderr.write(`quotas: ${exe} does not run here (${check.error ? check.error.message : (check.stderr || "").trim() || `exit ${check.status}`}); keeping the launcher\n`);
    return;
  }
  const bin = path.join(__dirname, "bin", "quotas");
  const tmp = `${bin}.${process.pid}.tmp`;
  try {
    try {
      fs.linkSync(exe, tmp);
    } catch {
      fs.copyFileSync(exe, tmp);
      fs.chmodSync(tmp, 0o755);
    }
    fs.renameSync(tmp, bin);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    process.stderr.write(`quotas: could not link ${exe} (${err.message}); keeping the launcher\n`);
  }
}

main();
