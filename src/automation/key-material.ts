// The server's two secrets: the signing secret (signed upload URLs, artifact ZIP tokens) and the key
// sealing stored third-party secrets (SMTP passwords, API keys). On SQLite they are files in the data
// dir, generated on first start: one server owns a data dir. On PostgreSQL every instance must hold the
// same ones, whatever its data dir, so they are decided in the database (SharedSecretStore): the first
// instance to start stores its material (a key file already in its data dir, else a new one) and every
// instance reads that back. A key the operator gives (--secret-key-file, AUTOMATION_SECRET_KEY) is never
// stored: only its fingerprint, so an instance given another key is named in the log, and one given
// none is refused instead of sealing with a key of its own.
import { createHmac } from "node:crypto";
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FatalError } from "../kernel/errors";
import { newSecret } from "../kernel/ids";
import type { Logger } from "../kernel/logger";
import type { AutomationStorage } from "./db/storage";

export interface KeyMaterial {
  signingSecret: string;
  secretKey: string;
}

/** `<dataDir>/<name>` when it holds a secret (at least 32 characters). */
function readDataDirSecret(dataDir: string, name: string): string | undefined {
  const file = join(dataDir, name);
  if (!existsSync(file)) return undefined;
  const s = readFileSync(file, "utf8").trim();
  return s.length >= 32 ? s : undefined;
}

/** Reads `<dataDir>/<name>`, generating it (atomically, mode 600) on first start. */
function dataDirSecret(dataDir: string, name: string): string {
  const have = readDataDirSecret(dataDir, name);
  if (have) return have;
  const file = join(dataDir, name);
  const secret = newSecret(32);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, secret + "\n", { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return secret;
}

/** Identifies key material without revealing it (an HMAC keyed by the material). */
export function fingerprint(material: string): string {
  return createHmac("sha256", material.trim()).update("automation-server key fingerprint v1").digest("hex");
}

/**
 * The context's secrets: what the config gives, else (SQLite) the data dir's files, or (PostgreSQL)
 * the ones every instance of the database shares. `dataDir: ":memory:"` writes no file.
 */
export async function keyMaterial(
  config: { dataDir: string; signingSecret: string; secretKey?: string },
  storage: AutomationStorage,
  at: string,
  log: Pick<Logger, "warn">,
): Promise<KeyMaterial> {
  const memory = config.dataDir === ":memory:";
  if (storage.backend === "sqlite") {
    return {
      signingSecret: config.signingSecret || (memory ? newSecret(32) : dataDirSecret(config.dataDir, "signing-secret")),
      secretKey: config.secretKey || (memory ? newSecret(32) : dataDirSecret(config.dataDir, "secret-key")),
    };
  }
  // A deployment moved from SQLite (or started before the secrets moved into the database) offers the
  // files it has, so its signed links and sealed secrets keep working.
  const offer = (name: string) => (memory ? undefined : readDataDirSecret(config.dataDir, name)) ?? newSecret(32);
  const shared = async (name: string) => {
    const value = offer(name);
    return storage.secrets.claim(name, { value, fingerprint: fingerprint(value) }, at);
  };
  const signingSecret = config.signingSecret || (await shared("signing-secret")).value!;
  if (config.secretKey) {
    const row = await storage.secrets.claim("secret-key", { value: null, fingerprint: fingerprint(config.secretKey) }, at);
    if (row.fingerprint !== fingerprint(config.secretKey)) {
      log.warn("this instance's secret key differs from the one the database's secrets were first sealed with: stored SMTP passwords and API keys sealed by other instances will not open here; give every instance the same --secret-key-file or AUTOMATION_SECRET_KEY");
    }
    return { signingSecret, secretKey: config.secretKey };
  }
  const row = await shared("secret-key");
  if (row.value === null) {
    throw new FatalError("this database's stored secrets are sealed with a key the operator gives (--secret-key-file or AUTOMATION_SECRET_KEY) on its other instances: give this instance the same");
  }
  return { signingSecret, secretKey: row.value };
}
