// Signed, expiring upload URLs: HMAC-SHA256 over the method, the upload id and the expiry, keyed with
// the server's signing secret. The URL is the whole credential for its PUT, like an S3 presigned URL.
import { timingSafeEqual } from "node:crypto";

function mac(secret: string, uploadId: string, expires: number): string {
  return new Bun.CryptoHasher("sha256", secret).update(`PUT\n/files/uploads/${uploadId}/content\n${expires}`).digest("base64url");
}

/** `{publicUrl}/v1/files/uploads/{id}/content?expires=<unix s>&signature=<mac>` */
export function signedUploadUrl(publicUrl: string, secret: string, uploadId: string, expiresAtMs: number): string {
  const expires = Math.floor(expiresAtMs / 1000);
  const base = publicUrl.replace(/\/+$/, "");
  return `${base}/v1/files/uploads/${encodeURIComponent(uploadId)}/content?expires=${expires}&signature=${mac(secret, uploadId, expires)}`;
}

export type SignatureCheck = "ok" | "invalid" | "expired";

/** Checks the signature first (so a forged URL never learns whether it expired), then the expiry. */
export function checkUploadSignature(
  secret: string,
  uploadId: string,
  expires: string | undefined,
  signature: string | undefined,
  nowMs: number,
): SignatureCheck {
  if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return "invalid";
  const want = Buffer.from(mac(secret, uploadId, Number(expires)));
  const got = Buffer.from(signature);
  if (got.length !== want.length || !timingSafeEqual(got, want)) return "invalid";
  return Number(expires) * 1000 <= nowMs ? "expired" : "ok";
}
