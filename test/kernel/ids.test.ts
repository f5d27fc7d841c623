// Ids: the time part is the base32 of `ms × 4096 + counter` (56 bits), so ids sort by creation; the
// random part is 16 Crockford characters. Checked against a plain BigInt encoding written here.
import { expect, test } from "bun:test";
import { idAt, newId } from "../../src/kernel/ids";

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

/** The time chars by the book: the 7 low bytes of a 64-bit big-endian number, base32, first 12 chars. */
function timeChars(ms: number, counter: number): string {
  let v = BigInt(ms) * 4096n + BigInt(counter);
  const bits: number[] = [];
  for (let i = 0; i < 56; i++, v >>= 1n) bits.unshift(Number(v & 1n));
  while (bits.length % 5) bits.push(0);
  let out = "";
  for (let i = 0; i < bits.length; i += 5) out += CROCKFORD[Number.parseInt(bits.slice(i, i + 5).join(""), 2)];
  return out.slice(0, 12);
}

test("the time part is base32 of ms × 4096 + counter, for times from 1970 to 2500", () => {
  const times = [0, 1, 65_535, 65_536, 1_764_000_000_000, 1_764_000_065_535, 1_764_000_065_536, 2 ** 40 - 1, 2 ** 40, 16_725_225_600_000];
  for (let i = 0; i < 2000; i++) times.push(1_900_000_000_000 + i * 7_919_993);
  for (const ms of times) {
    for (const counter of [0, 1, 2047, 4095]) {
      const id = idAt("run", ms, counter);
      expect(id.slice(0, 4)).toBe("run_");
      expect(id.slice(4, 16)).toBe(timeChars(ms, counter));
    }
  }
});

test("ids minted at once count up and sort in creation order; the random part is base32", () => {
  const ids = Array.from({ length: 300 }, () => newId("req"));
  for (const id of ids) expect(id).toMatch(/^req_[0-9a-hjkmnp-tv-z]{28}$/);
  expect([...ids].sort()).toEqual(ids);
  expect(new Set(ids.map((id) => id.slice(16))).size).toBe(300);
  // every one of the 32 characters turns up in the random parts (a table off by one would miss some)
  expect(new Set(ids.flatMap((id) => [...id.slice(16)])).size).toBe(32);
});
