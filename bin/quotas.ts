#!/usr/bin/env bun
// quotas: AI providers' plan usage as a TUI, JSON or one statusline. All logic lives in src/quotas/.
import { runMain } from "../src/kernel/config";
import { main } from "../src/quotas/cli";

await runMain("quotas", async () => {
  process.exitCode = await main(process.argv.slice(2));
});
