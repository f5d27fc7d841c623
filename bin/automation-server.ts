#!/usr/bin/env bun
// automation-server: self-hosted workflow automation API. Thin entry: subcommand dispatch lives in src/.
import { runMain } from "../src/kernel/config";
import { main } from "../src/automation/cli";

await runMain("automation-server", () => main(process.argv.slice(2)));
