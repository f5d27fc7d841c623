// SharedSecretStore on PostgreSQL (migration db/automation/pg/0020_shared_state.sql): instances starting
// together each offer their material; ON CONFLICT keeps the first, and every one reads that back.
import type { SharedSecret, SharedSecretStore } from "../../shared-secrets/store";
import type { Pg } from "./rows";

export class PgSecretStore implements SharedSecretStore {
  constructor(readonly pg: Pg) {}

  async claim(name: string, first: SharedSecret, at: string): Promise<SharedSecret> {
    await this.pg`INSERT INTO shared_secrets (name, value, fingerprint, created_at) VALUES (${name}, ${first.value}, ${first.fingerprint}, ${at})
      ON CONFLICT (name) DO NOTHING`;
    const [row] = await this.pg`SELECT value, fingerprint FROM shared_secrets WHERE name = ${name}`;
    return { value: row.value as string | null, fingerprint: row.fingerprint as string };
  }
}
