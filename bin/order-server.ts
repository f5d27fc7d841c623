#!/usr/bin/env bun
import { helpText, parseFlags, runMain } from "../src/kernel/config";
import { orderFlags, orderHelpExtra, startOrderServer } from "../src/orders/server";

await runMain("order-server", async () => {
  const { values } = parseFlags(process.argv.slice(2), orderFlags);
  if (values.help) {
    process.stdout.write(helpText("Usage: order-server [options]\n\nThe marketplace order API (OAuth2 password grant; SQLite, or PostgreSQL for N instances).", orderFlags, orderHelpExtra));
    return;
  }
  await startOrderServer({ ...values, oauthClients: process.env.ORDER_OAUTH_CLIENTS });
});
