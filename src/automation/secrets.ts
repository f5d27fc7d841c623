// Third-party secrets at rest (SMTP passwords, provider API keys): AES-256-GCM under the server's
// secret key, bound to the row they belong to, so a sealed value copied to another row does not open.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const VERSION = "v1";

/** The 32-byte AES key for a key material string (a generated key file or an operator's value). */
export function deriveKey(material: string): Buffer {
  return createHash("sha256").update(material.trim()).digest();
}

/** Raised when a sealed value does not open: the server's secret key changed, or the row was tampered with. */
export class SecretUnreadable extends Error {
  constructor() {
    super("the stored secret cannot be decrypted with this server's secret key");
    this.name = "SecretUnreadable";
  }
}

/** `v1:` + base64(iv | tag | ciphertext); `aad` names the owner (e.g. the server id). */
export function seal(key: Buffer, plain: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`;
}

export function open(key: Buffer, sealed: string, aad: string): string {
  const [version, data] = sealed.split(":");
  if (version !== VERSION || !data) throw new SecretUnreadable();
  const raw = Buffer.from(data, "base64");
  if (raw.length < 28) throw new SecretUnreadable();
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretUnreadable();
  }
}
