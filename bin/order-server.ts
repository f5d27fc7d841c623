#!/usr/bin/env bun
// order-server: the marketplace order API. Thin entry: subcommands (serve, backup, restore) live in src/orders/cli.ts.
import { runMain } from "../src/kernel/config";
import { main } from "../src/orders/cli";

await runMain("order-server", () => main(process.argv.slice(2)));
