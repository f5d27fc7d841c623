// Money on the wire is rubles as a JSON number with at most two decimals; everywhere else it is integer
// kopecks.
import { Invalid } from "../kernel/errors";

/** Largest order price: 1 000 000 000 rubles. */
export const MAX_PRICE_KOPECKS = 100_000_000_000;

/** Kopecks → rubles for the wire (exact for every integer kopeck amount below 2^53). */
export function rubles(kopecks: number): number {
  return kopecks / 100;
}

/**
 * A price from the wire (a JSON number, or a numeric string as the original Jackson-based service
 * accepted) → kopecks. Rejects non-numbers, ≤ 0, > 1 000 000 000 and more than two decimals.
 */
export function priceToKopecks(value: unknown, field = "price"): number {
  let n: number;
  if (typeof value === "number") n = value;
  else if (typeof value === "string" && /^\s*\d+(\.\d+)?\s*$/.test(value)) n = Number(value);
  else throw Invalid(`${field} must be a number of rubles, e.g. 1000 or 99.95`, { field });
  if (!Number.isFinite(n)) throw Invalid(`${field} must be a finite number`, { field });
  if (n <= 0) throw Invalid(`${field} must be greater than 0 (got ${n})`, { field });
  if (n > MAX_PRICE_KOPECKS / 100) throw Invalid(`${field} must be at most 1000000000 (got ${n})`, { field });
  // The number's shortest decimal form decides (0.29 * 100 is 28.999999999999996 in binary, yet 0.29 has
  // two decimals); a tolerance would let 10.000000001 through as 10.
  if (!/^\d+(\.\d{1,2})?$/.test(String(n))) throw Invalid(`${field} must have at most 2 decimals (got ${n})`, { field });
  return Math.round(n * 100);
}

/** The platform's fee: 5 % of the price, rounded half-up to the kopeck. */
export function commissionOf(priceKopecks: number): number {
  return Math.floor((priceKopecks * 5 + 50) / 100);
}

/** "123.40" for messages. */
export function formatRubles(kopecks: number): string {
  const sign = kopecks < 0 ? "-" : "";
  const abs = Math.abs(kopecks);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}
