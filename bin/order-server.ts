#!/usr/bin/env bun
// order-server: the marketplace order API. Thin entry: subcommands (serve, backup, restore) live in src/orders/cli.ts.
import { versionLine } from "../src/kernel/build-info";
import { runMain } from "../src/kernel/config";
import { main } from "../src/orders/cli";

if (process.argv[2] === "--version") console.log(versionLine("order-server"));
else await runMain("order-server", () => main(process.argv.slice(2)));
