// The automation server's configuration for tests and benchmarks: in-memory, one worker, no demo. A
// module of its own (no test-runner hooks), so benchmark scripts run outside `bun test` can use it too.
import type { AutomationConfig } from "../../../src/automation/config";

export function testConfig(over: Partial<AutomationConfig> = {}): AutomationConfig {
  return {
    port: 0,
    hostname: "127.0.0.1",
    dataDir: ":memory:",
    workers: 1,
    demo: false,
    httpAllowHosts: [],
    // The SMTP sinks, model servers and HTTP fakes of the tests listen on loopback (--outbound-allow).
    outboundAllow: ["127.0.0.0/8", "::1"],
    envAllowList: [],
    publicUrl: "http://localhost",
    signingSecret: "test-signing-secret-test-signing-secret",
    ...over,
  };
}

/** The backend the automation tests run on: `AUTOMATION_TEST_DB=postgres` runs them on PostgreSQL. */
export const testBackend: "sqlite" | "postgres" = process.env.AUTOMATION_TEST_DB === "postgres" ? "postgres" : "sqlite";

let template: Promise<string> | undefined;
const byDataDir = new Map<string, Promise<string>>();

/**
 * What a test context adds to its config for the backend under test: nothing on SQLite, a database on
 * the test process's PostgreSQL server otherwise (imported only then): a copy of one migrated once per
 * process, so each context starts on the full schema in a fraction of the time. Contexts opened again
 * on the same data dir (restart tests) get the same database back.
 */
export async function testDatabase(dataDir?: string): Promise<Partial<AutomationConfig>> {
  if (testBackend !== "postgres") return {};
  const { freshPostgresDb } = await import("../../support/postgres");
  template ??= (async () => {
    const url = await freshPostgresDb();
    const { migrateAutomationPg } = await import("../../../src/automation/db/pg-migrate");
    await migrateAutomationPg(url, 1);
    return new URL(url).pathname.slice(1);
  })();
  const fresh = async () => freshPostgresDb(await template);
  let db: Promise<string>;
  if (dataDir && dataDir !== ":memory:") {
    db = byDataDir.get(dataDir) ?? fresh();
    byDataDir.set(dataDir, db);
  } else db = fresh();
  // Small pools whose idle connections close at once: a file opens dozens of contexts on one server.
  return { db: await db, dbPool: 3, dbIdleTimeout: 1 };
}
