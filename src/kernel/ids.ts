/** Every id and secret the products mint is made here. */

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

function base32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += CROCKFORD[(value << (5 - bits)) & 31];
  return out;
}

let lastMs = 0;
let seq = 0;

/**
 * A prefixed, time-sortable id: `run_` + 10 chars of milliseconds + 16 random chars. Ids minted in the
 * same process sort in creation order (a counter breaks ties within one millisecond), which is what
 * cursor pagination relies on.
 */
export function newId(prefix: string, at: number = Date.now()): string {
  if (at <= lastMs) {
    at = lastMs;
    seq++;
  } else {
    lastMs = at;
    seq = 0;
  }
  timeBytes.setBigUint64(0, BigInt(at) * 4096n + BigInt(seq & 4095));
  return `${prefix}_${base32(time.subarray(1)).slice(0, 12)}${base32(randomBytes(10))}`;
}

const time = new Uint8Array(8);
const timeBytes = new DataView(time.buffer);
// Random bytes drawn from the CSPRNG 4 KiB at a time: one call per ~400 ids instead of one per id
// (a request id is minted per request). Each byte is used once.
const pool = new Uint8Array(4096);
let poolAt = pool.length;

function randomBytes(n: number): Uint8Array {
  if (poolAt + n > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  const out = pool.subarray(poolAt, poolAt + n);
  poolAt += n;
  return out;
}

/**
 * A random token of `chars` lowercase Crockford base32 characters (5 bits each): for secrets that sit
 * where case is not preserved and punctuation is awkward, such as an e-mail address's local part.
 */
export function newToken(chars: number): string {
  return base32(crypto.getRandomValues(new Uint8Array(Math.ceil((chars * 5) / 8)))).slice(0, chars);
}

/** An opaque secret with `bytes` of entropy (default 32 = 256 bits), base64url. */
export function newSecret(bytes = 32): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}

/** SHA-256 hex of a secret: what is stored for tokens and API keys (high-entropy, so no salt needed). */
export function hashSecret(secret: string): string {
  return new Bun.CryptoHasher("sha256").update(secret).digest("hex");
}
