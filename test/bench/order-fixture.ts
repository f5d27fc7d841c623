// The order benchmarks' fixture: a SQLite database of N WAITING orders of one customer, made through
// the server's own migrations and registration, the rows written straight into the database (the API
// would take minutes; the triggers keep the counters). PostgreSQL too. Shared by orders.ts and request-path.ts.
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { startServer } from "../e2e/support";
import { DEMO_CLIENT, remote } from "../orders/remote";

/** The server's environment in the benchmarks: the demo OAuth client, production profile, quiet logs. */
export const BENCH_ENV = { ORDER_OAUTH_CLIENTS: `${DEMO_CLIENT.id}:${DEMO_CLIENT.secret}`, ORDER_PROFILE: undefined, ORDER_DB: undefined, LOG_LEVEL: "warn" };
export const BASE_TIME = Date.parse("2026-01-01T00:00:00Z");

/** Starts `bin` once on an empty database to migrate it and register the bench users; the customer's id. */
export async function prepareOrderDb(bin: string, db: string): Promise<number> {
  const server = await startServer([bin, "--host", "127.0.0.1", "--db", db], { env: BENCH_ENV });
  try {
    const api = remote(server.url);
    const customer = await api.register("bench-customer", "Customer");
    await api.register("bench-performer", "Performer");
    await api.register("bench-writer", "Customer");
    return customer.id;
  } finally {
    await server.kill("SIGTERM");
  }
}

/** A SQLite file of `orders` WAITING orders (created a second apart) and the bench users. */
export async function sqliteOrderFixture(bin: string, path: string, orders: number): Promise<void> {
  const customer = await prepareOrderDb(bin, path);
  const fixture = new Database(path);
  fixture.transaction(() => {
    const ins = fixture.prepare("INSERT INTO orders (description, price, status, created_at, customer_id) VALUES (?, ?, 0, ?, ?)");
    for (let i = 0; i < orders; i++) ins.run(`Bench order #${i}: fix something small`, 100 + (i % 5000), BASE_TIME + i * 1000, customer);
  })();
  fixture.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  fixture.close();
}

/** The same on PostgreSQL (`url`, an empty database), rows made by generate_series, then VACUUM ANALYZE. */
export async function postgresOrderFixture(bin: string, url: string, orders: number): Promise<void> {
  const customer = await prepareOrderDb(bin, url);
  const pg = new SQL({ url, max: 1 });
  try {
    await pg.unsafe(
      `INSERT INTO orders (description, price, status, created_at, customer_id)
       SELECT 'Bench order #' || i || ': fix something small', 100 + (i % 5000), 0, ${BASE_TIME} + i * 1000, ${customer} FROM generate_series(0, ${orders - 1}) AS i`,
    );
    await pg.unsafe("VACUUM ANALYZE orders");
  } finally {
    await pg.close();
  }
}

/** A wrk script asking for random pages of 20 among `orders` with a bearer token; written under `dir`. */
export async function randomPagesLua(dir: string, token: string, orders: number): Promise<string> {
  const file = `${dir}/pages-${Bun.hash(token)}.lua`;
  await Bun.write(
    file,
    `wrk.headers["Authorization"] = "Bearer ${token}"\nrequest = function()\n  return wrk.format(nil, "/orders?size=20&page=" .. math.random(0, ${Math.floor(orders / 20) - 1}))\nend\n`,
  );
  return file;
}
