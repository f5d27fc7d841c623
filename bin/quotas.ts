#!/usr/bin/env bun
// quotas: AI providers' plan usage as a TUI, JSON or one statusline. All logic lives in src/quotas/.
// The statusline runs in a shell prompt, so it loads only its own small part of the tool; every other
// mode loads the rest on demand. No top-level await: the binary is precompiled to bytecode.
import { runMain } from "../src/kernel/config";
import { makeCtx } from "../src/quotas/core/context";
import { parseArgs } from "../src/quotas/config/flags";
import { runStatusline } from "../src/quotas/background/statusline-mode";

void runMain("quotas", async () => {
  const argv = process.argv.slice(2);
  const args = argv[0] === "usage" ? null : parseArgs(argv);
  if (args?.mode === "statusline") {
    const { f, selectors } = args;
    // console.log, not process.stdout.write: setting up the stdout stream costs the prompt several ms.
    console.log(await runStatusline(makeCtx(), { selectors, format: f.format, icons: !f["no-icons"], updateCheck: !f["no-update-check"] }));
    return;
  }
  const { main } = await import("../src/quotas/cli");
  process.exitCode = await main(argv);
});
