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
