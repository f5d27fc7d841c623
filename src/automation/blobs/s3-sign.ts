// AWS Signature V4 query signing (presigned URLs) for the S3 calls Bun's S3Client does not expose:
// multipart upload control and part URLs, server-side copy, listing open multipart uploads, and GET
// URLs that override response headers. Path-style addressing: {endpoint}/{bucket}/{key}.
export interface S3Credentials {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** RFC 3986 encoding as SigV4 wants it: only unreserved characters stay as they are. */
export function uriEncode(s: string, keepSlash = false): string {
  let out = "";
  for (const byte of new TextEncoder().encode(s)) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c) || (keepSlash && c === "/")) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

const hmac = (key: string | Uint8Array, data: string) => new Uint8Array(new Bun.CryptoHasher("sha256", key).update(data).digest().buffer);
const hex = (data: string) => new Bun.CryptoHasher("sha256").update(data).digest("hex");

/** `20261125T165110Z` */
export function amzDate(d: Date): string {
  return d.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

export interface PresignInput {
  method: string;
  /** Object key (unencoded); "" for bucket-level calls. */
  key: string;
  /** Extra query parameters (signed), e.g. uploadId, partNumber, response-content-disposition. */
  query?: Record<string, string>;
  /** Headers the request will carry that must be signed (e.g. x-amz-copy-source). */
  headers?: Record<string, string>;
  expiresInS: number;
  /** Signing time (tests pin it). */
  now?: Date;
}

/** A presigned URL: the whole credential for one request of `method` on `key` until it expires. */
export function presign(c: S3Credentials, input: PresignInput): string {
  const url = new URL(c.endpoint);
  const basePath = url.pathname.replace(/\/+$/, "");
  const path = `${basePath}/${uriEncode(c.bucket)}${input.key ? `/${uriEncode(input.key, true)}` : ""}`;
  const date = amzDate(input.now ?? new Date());
  const day = date.slice(0, 8);
  const scope = `${day}/${c.region}/s3/aws4_request`;
  const headers: Record<string, string> = { host: url.host };
  for (const [k, v] of Object.entries(input.headers ?? {})) headers[k.toLowerCase()] = v.trim();
  const signedHeaders = Object.keys(headers).sort().join(";");
  const query: Record<string, string> = {
    ...input.query,
    "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
    "X-Amz-Credential": `${c.accessKeyId}/${scope}`,
    "X-Amz-Date": date,
    "X-Amz-Expires": String(input.expiresInS),
    "X-Amz-SignedHeaders": signedHeaders,
  };
  if (c.sessionToken) query["X-Amz-Security-Token"] = c.sessionToken;
  const canonicalQuery = Object.keys(query)
    .sort()
    .map((k) => `${uriEncode(k)}=${uriEncode(query[k])}`)
    .join("&");
  const canonicalHeaders = Object.keys(headers)
    .sort()
    .map((k) => `${k}:${headers[k]}\n`)
    .join("");
  const canonicalRequest = [input.method, path, canonicalQuery, canonicalHeaders, signedHeaders, "UNSIGNED-PAYLOAD"].join("\n");
  const stringToSign = ["AWS4-HMAC-SHA256", date, scope, hex(canonicalRequest)].join("\n");
  const kDate = hmac(`AWS4${c.secretAccessKey}`, day);
  const kSigning = hmac(hmac(hmac(kDate, c.region), "s3"), "aws4_request");
  const signature = new Bun.CryptoHasher("sha256", kSigning).update(stringToSign).digest("hex");
  return `${url.protocol}//${url.host}${path}?${canonicalQuery}&X-Amz-Signature=${signature}`;
}

/** Sends one signed request (a presigned URL valid for a minute) and throws on a non-2xx answer. */
export async function s3Request(
  c: S3Credentials,
  input: Omit<PresignInput, "expiresInS"> & { body?: string },
): Promise<{ status: number; text: string }> {
  const url = presign(c, { ...input, expiresInS: 60 });
  const res = await fetch(url, { method: input.method, headers: input.headers, body: input.body });
  const text = await res.text();
  if (!res.ok) throw new S3Error(res.status, xmlTag(text, "Code") ?? `HTTP ${res.status}`, xmlTag(text, "Message") ?? text.slice(0, 200));
  // CompleteMultipartUpload and CopyObject can fail with 200 and an <Error> body.
  if (/^\s*(<\?xml[^>]*>\s*)?<Error>/.test(text)) throw new S3Error(500, xmlTag(text, "Code") ?? "InternalError", xmlTag(text, "Message") ?? "");
  return { status: res.status, text };
}

export class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`S3 ${code}: ${message}`);
  }
}

/** The text of the first <tag>…</tag> (S3's XML answers are flat enough for this). */
export function xmlTag(xml: string, tag: string): string | undefined {
  const m = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(xml);
  return m ? unescapeXml(m[1]) : undefined;
}

/** Every <tag>…</tag> block's inner text. */
export function xmlBlocks(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((m) => m[1]);
}

const unescapeXml = (s: string) => s.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
export const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
