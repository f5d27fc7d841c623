#!/usr/bin/env node
"use strict";
// The `quotas` command when npm ran no install scripts (--ignore-scripts): starts this platform's
// executable. Normally install.cjs has replaced this file with that executable, and no Node process
// runs in front of it (a shell prompt runs `quotas --statusline` on every line).
const { spawnSync } = require("child_process");
let exe;
try {
  exe = require("../lib/platform.cjs").executable();
} catch (err) {
  process.stderr.write(`quotas: ${err.message}\n`);
  process.exit(1);
}
const r = spawnSync(exe, process.argv.slice(2), { stdio: "inherit" });
if (r.error) {
  process.stderr.write(`quotas: cannot start ${exe}: ${r.error.message}\n`);
  process.exit(1);
}
if (r.signal) process.kill(process.pid, r.signal);
process.exit(r.status === null ? 1 : r.status);
