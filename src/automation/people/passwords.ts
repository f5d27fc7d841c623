// Local passwords: argon2id through Bun.password, at least 12 characters, and none of the commonest
// passwords (common-passwords.ts, matched after lower-casing, undoing the usual letter swaps and
// stripping trailing digits and symbols, so "Password1234!" is refused like "password").
import { Invalid } from "../../kernel/errors";
import { COMMON_PASSWORDS } from "./common-passwords";

export const MIN_PASSWORD = 12;
export const MAX_PASSWORD = 256;

const COMMON = new Set(COMMON_PASSWORDS);

const SWAPS: Record<string, string> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", $: "s", "!": "i" };

function looksCommon(password: string): boolean {
  const lower = password.toLowerCase();
  if (/^(.)\1*$/.test(lower)) return true;
  const candidates = new Set<string>();
  for (const s of [lower, lower.replace(/[\d\W_]+$/, ""), lower.replace(/^[\d\W_]+/, "")]) {
    candidates.add(s);
    candidates.add([...s].map((c) => SWAPS[c] ?? c).join(""));
  }
  for (const c of candidates) {
    if (!c) continue;
    if (COMMON.has(c)) return true;
    // A common word repeated ("passwordpassword", "qwertyqwerty").
    for (let n = 1; n <= c.length / 2; n++) if (c.length % n === 0 && COMMON.has(c.slice(0, n)) && c.slice(0, n).repeat(c.length / n) === c) return true;
  }
  return false;
}

/** Refuses (400, field `password`) a password too short, too long or too common. */
export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD) throw Invalid(`password must be at least ${MIN_PASSWORD} characters`, { field: "password", code: "password_too_short" });
  if (password.length > MAX_PASSWORD) throw Invalid(`password must be at most ${MAX_PASSWORD} characters`, { field: "password", code: "password_too_long" });
  if (looksCommon(password)) throw Invalid("password is one of the commonest passwords; choose another", { field: "password", code: "password_too_common" });
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

/** A hash to verify against when the account is unknown, so a wrong e-mail takes as long as a wrong password. */
let decoy: Promise<string> | undefined;

export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  if (password.length > MAX_PASSWORD) return false;
  if (hash === null) {
    await Bun.password.verify(password, await (decoy ??= hashPassword("decoy password that never matches")));
    return false;
  }
  return Bun.password.verify(password, hash);
}
