// The automation server's configuration for tests and benchmarks: in-memory, one worker, no demo. A
// module of its own (no test-runner hooks), so benchmark scripts run outside `bun test` can use it too.
import type { AutomationConfig } from "../../../src/automation/context";

export function testConfig(over: Partial<AutomationConfig> = {}): AutomationConfig {
  return {
    port: 0,
    hostname: "127.0.0.1",
    dataDir: ":memory:",
    workers: 1,
    demo: false,
    httpAllowHosts: [],
    envAllowList: [],
    publicUrl: "http://localhost",
    signingSecret: "test-signing-secret-test-signing-secret",
    ...over,
  };
}

/** The backend the automation tests run on: `AUTOMATION_TEST_DB=postgres` runs them on PostgreSQL. */
export const testBackend: "sqlite" | "postgres" = process.env.AUTOMATION_TEST_DB === "postgres" ? "postgres" : "sqlite";

let template: Promise<string> | undefined;

/**
 * What a test context adds to its config for the backend under test: nothing on SQLite (in memory), a
 * new database on the test process's PostgreSQL server otherwise (imported only then): a copy of one
 * migrated once per process, so each context starts on the full schema in a fraction of the time.
 */
export async function testDatabase(): Promise<Partial<AutomationConfig>> {
  if (testBackend !== "postgres") return {};
  const { freshPostgresDb } = await import("../../support/postgres");
  template ??= (async () => {
    const url = await freshPostgresDb();
    const { migrateAutomationPg } = await import("../../../src/automation/db/pg-migrate");
    await migrateAutomationPg(url, 1);
    return new URL(url).pathname.slice(1);
  })();
  return { db: await freshPostgresDb(await template), dbPool: 4 };
}
