// SharedSecretStore over bun:sqlite (migration db/automation/0020_shared_state.sql): the first row written wins.
import type { Database } from "bun:sqlite";
import type { SharedSecret, SharedSecretStore } from "../../shared-secrets/store";

export function sqliteSecretStore(sqlite: Database): SharedSecretStore {
  const insert = sqlite.query<never, [string, string | null, string, string]>(
    "INSERT INTO shared_secrets (name, value, fingerprint, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
  );
  const get = sqlite.query<SharedSecret, [string]>("SELECT value, fingerprint FROM shared_secrets WHERE name = ?");
  return {
    async claim(name, first, at) {
      insert.run(name, first.value, first.fingerprint, at);
      const row = get.get(name)!;
      return { value: row.value, fingerprint: row.fingerprint };
    },
  };
}
