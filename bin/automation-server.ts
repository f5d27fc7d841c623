#!/usr/bin/env bun
// automation-server: self-hosted workflow automation API. Thin entry: subcommand dispatch lives in src/.
// The hidden sandbox subcommand is the script sandbox's child process: it loads only the sandbox.
import { SANDBOX_SUBCOMMAND, serveSandbox } from "../src/automation/engine/sandbox/child";

if (process.argv[2] === SANDBOX_SUBCOMMAND) await serveSandbox(Number(process.argv[3]));
else if (process.argv[2] === "--version") console.log((await import("../src/kernel/build-info")).versionLine("automation-server"));
else {
  const [{ runMain }, { main }] = await Promise.all([import("../src/kernel/config"), import("../src/automation/cli")]);
  await runMain("automation-server", () => main(process.argv.slice(2)));
}
