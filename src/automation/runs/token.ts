// Signed, expiring tokens for the artifacts ZIP download (`?token=`), usable without a Bearer key:
// `<expires unix s>.<HMAC-SHA256(secret, "artifacts-zip\n<runId>\n<expires>")>`.
import { timingSafeEqual } from "node:crypto";

const mac = (secret: string, runId: string, expires: number) =>
  new Bun.CryptoHasher("sha256", secret).update(`artifacts-zip\n${runId}\n${expires}`).digest("base64url");

export function signZipToken(secret: string, runId: string, expiresAtMs: number): string {
  const expires = Math.floor(expiresAtMs / 1000);
  return `${expires}.${mac(secret, runId, expires)}`;
}

/** Signature first (a forged token never learns about expiry), then expiry. */
export function checkZipToken(secret: string, runId: string, token: string, nowMs: number): "ok" | "invalid" | "expired" {
  const m = /^(\d{1,12})\.([\w-]{43})$/.exec(token);
  if (!m) return "invalid";
  const want = Buffer.from(mac(secret, runId, Number(m[1])));
  const got = Buffer.from(m[2]);
  if (got.length !== want.length || !timingSafeEqual(got, want)) return "invalid";
  return Number(m[1]) * 1000 <= nowMs ? "expired" : "ok";
}
