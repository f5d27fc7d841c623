// No SQL outside the automation storage layer (issue 21): services, routes, the engine and the workers
// reach the database only through `ctx.storage` (src/automation/db/storage.ts), whose implementations
// live in src/automation/db/. The files still listed as known are the features not converted yet; the
// list only shrinks: a known file that no longer needs its entry fails the test too.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { expect, test } from "bun:test";
import { root } from "../e2e/support";

const KNOWN = new Set<string>([
]);

/** What counts as touching the database directly. */
const SQL_USE: [string, RegExp][] = [
  ["a SQLite connection (.sqlite)", /\.sqlite\b/],
  ["bun:sqlite", /["']bun:sqlite["']/],
  ["drizzle-orm", /["']drizzle-orm(\/[\w-]+)?["']/],
  ["a drizzle handle (dbOf)", /\bdbOf\(/],
  [".prepare(", /\.prepare\(/],
  [".query(", /\.query(<[^>]*>)?\(/],
  ["SQL text", /["'`][^"'`]*\b(SELECT [^"'`]*\bFROM|UPDATE \w+ SET|INSERT (OR \w+ )?INTO|DELETE FROM)\b/],
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(name) ? [p] : [];
  });
}

/** Comments say what SQL does without being SQL: they are left out. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");

const storageLayer = join(root, "src/automation/db");
const found = new Map<string, string[]>();
for (const file of sourceFiles(join(root, "src/automation"))) {
  if (file.startsWith(storageLayer + "/")) continue;
  const text = code(readFileSync(file, "utf8"));
  const uses = SQL_USE.filter(([, re]) => re.test(text)).map(([what]) => what);
  if (uses.length) found.set(relative(root, file), uses);
}

test("the detector sees SQL (sanity: the storage layer itself is full of it)", () => {
  const sqlite = code(readFileSync(join(storageLayer, "sqlite/experiments.ts"), "utf8"));
  expect(SQL_USE.filter(([, re]) => re.test(sqlite)).map(([what]) => what)).toEqual(["a SQLite connection (.sqlite)", "bun:sqlite", ".query(", "SQL text"]);
  expect(code("// SELECT x FROM t\nconst a = 1;")).not.toMatch(SQL_USE[6][1]);
  expect(SQL_USE[6][1].test('const q = "UPDATE runs SET status = ?";')).toBe(true);
});

test("no SQL in src/automation outside the storage layer (src/automation/db/) beyond the known files", () => {
  const unexpected = [...found].filter(([file]) => !KNOWN.has(file)).map(([file, uses]) => `${file}: ${uses.join(", ")}`);
  expect(unexpected).toEqual([]);
});

test("every known file still uses SQL (remove it from KNOWN once it is converted)", () => {
  expect([...KNOWN].filter((file) => !found.has(file))).toEqual([]);
});
