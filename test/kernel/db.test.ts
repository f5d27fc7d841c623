import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite, STATEMENT_CACHE } from "../../src/kernel/db";
import { newId, hashSecret, newSecret } from "../../src/kernel/ids";

describe("openSqlite", () => {
  test("applies migrations once, in order, and uses WAL on files", () => {
    const path = join(mkdtempSync(join(tmpdir(), "kernel-")), "sub", "x.db");
    const ms = [
      { name: "0000", sql: "CREATE TABLE a (id INTEGER);--> statement-breakpoint\nINSERT INTO a VALUES (1);" },
      { name: "0001", sql: "INSERT INTO a VALUES (2);" },
    ];
    const db1 = openSqlite(path, ms);
    expect(db1.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    db1.close();
    const db2 = openSqlite(path, ms);
    expect(db2.query("SELECT count(*) AS n FROM a").get()).toEqual({ n: 2 });
    db2.close();
  });
  test("a failing migration leaves nothing behind", () => {
    const db = openSqlite(":memory:", []);
    expect(() =>
      openSqlite(":memory:", [{ name: "bad", sql: "CREATE TABLE b (id INTEGER);--> statement-breakpoint\nNOT SQL" }]),
    ).toThrow();
    db.close();
  });
  test(`a statement stays prepared while fewer than ${STATEMENT_CACHE} others ran since (bun:sqlite keeps 20 by default)`, () => {
    const db = openSqlite(":memory:", [{ name: "0000", sql: "CREATE TABLE a (id INTEGER);" }]);
    const first = db.query("SELECT id FROM a WHERE id = ?");
    // More distinct statements than bun:sqlite's default cache, as one request of a store runs.
    for (let i = 0; i < 200; i++) db.query(`SELECT id FROM a WHERE id = ? + ${i}`).all(1);
    expect(db.query("SELECT id FROM a WHERE id = ?")).toBe(first); // the same prepared statement, not prepared again
    db.close();
  });
});

describe("ids", () => {
  test("prefixed ids sort in creation order", () => {
    const ids = Array.from({ length: 2000 }, () => newId("run"));
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^run_[0-9a-z]{28}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
  test("secrets have 256 bits and hash deterministically", () => {
    const s = newSecret();
    expect(Buffer.from(s, "base64url").length).toBe(32);
    expect(hashSecret(s)).toBe(hashSecret(s));
    expect(hashSecret(s)).not.toBe(s);
  });
});
