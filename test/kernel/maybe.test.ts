import { expect, test } from "bun:test";
import { andThen } from "../../src/kernel/maybe";

test("andThen: a plain value is carried on at once (no promise), a promise after it settles", async () => {
  const now = andThen(2, (v) => v * 10);
  expect(now).toBe(20);
  const later = andThen(Promise.resolve(3), (v) => v * 10);
  expect(later).toBeInstanceOf(Promise);
  expect(await later).toBe(30);
});

test("andThen: a throw on a plain value is synchronous, on a promise a rejection", async () => {
  const boom = (): number => {
    throw new Error("boom");
  };
  expect(() => andThen(1, boom)).toThrow("boom");
  const rejected = andThen(Promise.resolve(1), boom);
  expect(rejected).toBeInstanceOf(Promise);
  await expect(rejected).rejects.toThrow("boom");
});
