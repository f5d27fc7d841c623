// Each feature owns its store; the storage layer only implements (issue 35). In src/automation:
// (a) a feature never imports src/automation/db/: it takes its store interface and rows from its own
//     store.ts (a store.ts may re-export the drizzle-inferred rows of db/tables/, types only);
// (b) src/automation/db/ imports of a feature only its store.ts, and from it types, plus the few values
//     the store contract itself defines (CONTRACT_VALUES);
// (c) no circle between folders beyond the known ones (KNOWN_CIRCLES), each named with its reason.
// The lists below only shrink: an entry that is no longer needed fails the test too.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "bun:test";
import { root } from "../e2e/support";
import { circles, importGraph } from "./imports";

const A = "src/automation/";
const DB = `${A}db/`;
const TABLES = `${DB}tables/`;

/** The start-up wiring: top-level files that build the storage or read storage-level tools. */
const WIRING: Record<string, string> = {
  "src/automation/server.ts": "opens the storage (db/open.ts) the server runs on",
  "src/automation/admin.ts": "opens the storage for the CLI subcommands and hands AutomationStorage to them",
  "src/automation/context.ts": "holds the opened AutomationStorage in the context every feature receives",
  "src/automation/cli.ts": "the `db` subcommands: PostgreSQL migrate and copy (db/pg-migrate.ts, db/pg-copy.ts)",
  "src/automation/backup.ts": "SQLite online backup (db/sqlite/backup.ts) of a running server",
  "src/automation/metrics.ts": "the SQLite busy-wait histogram (db/sqlite/timing.ts) it exports",
  "src/automation/key-material.ts": "reads storage.secrets and storage.backend at start-up",
};

/** Values (not types) a store contract defines and both backends must produce alike. */
const CONTRACT_VALUES: Record<string, string> = {
  TickTaken: "schedules/store.ts: the error a run insert throws for a tick already decided",
  StaleSource: "runs/store.ts: the error a run insert throws when its automation changed since read",
  JournalWriteLost: "runs/store.ts: the error a finish throws when a step's record did not commit",
  TERMINAL: "runs/store.ts: the terminal run statuses the stores' conditional writes test",
  isTerminal: "runs/store.ts: the same test on one status",
  checkNotification: "runs/store.ts: the channel and payload check both Notifications apply",
  examplePin: "datasets/store.ts: the blob-pin owner of an example's files",
  reviewPin: "reviews/store.ts: the blob-pin owner of a run's corrected files",
  itemOf: "backtests/store.ts: the item row both backends hand out, from their columns (scores as the interface types them)",
  GENESIS: "audit/store.ts: the predecessor hash of an audit chain's first entry",
  canonical: "audit/store.ts: an audit entry's serialization under its hash (db/audit-blocks.ts links a batch with it)",
  hashOf: "audit/store.ts: the sha256 of that serialization",
};

/** Circles between folders still there, each with why; a feature's store.ts and db/tables/ count as units of their own. */
const KNOWN_CIRCLES: Record<string, { why: string; units: string[] }> = {};

const graph = importGraph(root);
const files = [...graph.keys()].filter((f) => f.startsWith(A));
const isStore = (f: string) => /^src\/automation\/[^/]+\/store\.ts$/.test(f) && !f.startsWith(DB);

// (a) features importing db/
const featureToDb = files
  .filter((f) => !f.startsWith(DB) && !(f in WIRING))
  .flatMap((f) => [...graph.get(f)!].filter((t) => t.startsWith(DB) && !(isStore(f) && t.startsWith(TABLES) && typeOnly(f, t))).map((t) => `${f} -> ${t}`));

// (b) db/ importing features
type Import = { from: string; target: string; names: string[]; typeOnly: boolean };
function importsOf(file: string): Import[] {
  const text = readFileSync(join(root, file), "utf8").replace(/^\s*\/\/.*$/gm, "");
  const out: Import[] = [];
  for (const m of text.matchAll(/(?:^|[\s;])(import|export)\s+(type\s+)?(\{[^}]*\}|[\w*][^'"`;]*?)\s*from\s*["']([^"']+)["']/gm)) {
    const target = [...graph.get(file)!].find((t) => resolves(file, m[4], t));
    if (!target) continue;
    const specs = m[3].startsWith("{") ? m[3].slice(1, -1).split(",").map((s) => s.trim()).filter(Boolean) : [m[3].trim()];
    const values = m[2] ? [] : specs.filter((s) => !s.startsWith("type "));
    out.push({ from: file, target, names: values.map((s) => s.split(/\s+as\s+/)[0]), typeOnly: values.length === 0 });
  }
  return out;
}
function resolves(from: string, spec: string, target: string): boolean {
  if (!spec.startsWith(".")) return false;
  const base = join(from, "..", spec);
  return [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].includes(target);
}
function typeOnly(file: string, target: string): boolean {
  return importsOf(file).filter((i) => i.target === target).every((i) => i.typeOnly);
}
const dbToFeature = files
  .filter((f) => f.startsWith(DB))
  .flatMap(importsOf)
  .filter((i) => i.target.startsWith(A) && !i.target.startsWith(DB))
  .flatMap((i) => {
    if (!isStore(i.target)) return [`${i.from} -> ${i.target} (not a store.ts)`];
    const extra = i.names.filter((n) => !(n in CONTRACT_VALUES));
    return extra.length ? [`${i.from} -> ${i.target}: values ${extra.join(", ")}`] : [];
  });
const valuesUsed = new Set(files.filter((f) => f.startsWith(DB)).flatMap(importsOf).filter((i) => isStore(i.target)).flatMap((i) => i.names));

// (c) circles between folders
const unit = (f: string) => {
  if (f.startsWith(TABLES)) return `${DB}tables`;
  if (isStore(f)) return f;
  const rest = f.slice(A.length);
  return rest.includes("/") ? A + rest.slice(0, rest.indexOf("/")) : f;
};
const folders = new Map<string, Set<string>>();
for (const f of files) {
  const from = unit(f);
  if (!folders.has(from)) folders.set(from, new Set());
  for (const t of graph.get(f)!) if (t.startsWith(A) && unit(t) !== from) folders.get(from)!.add(unit(t));
}
// A folder and its own store.ts are one folder: a circle of only those two is not between folders (a low
// folder such as models/, below db/, has its store.ts type its rows with the folder's own contract).
const folderOf = (u: string) => (isStore(u) ? u.slice(0, -"/store.ts".length) : u);
const folderCircles = circles(folders).filter((c) => new Set(c.map(folderOf)).size > 1);

test("the detectors see what they look for (sanity)", () => {
  expect(files.length).toBeGreaterThan(200);
  expect(graph.get(`${DB}pg/runs.ts`)).toContain(`${A}runs/store.ts`);
  expect(importsOf(`${DB}sqlite/runs.ts`).find((i) => i.target === `${A}runs/store.ts` && !i.typeOnly)?.names).toContain("isTerminal");
  expect(circles(new Map([["a", new Set(["b"])], ["b", new Set(["a"])]]))).toEqual([["a", "b"]]);
  expect(unit(`${A}runs/worker.ts`)).toBe(`${A}runs`);
  expect(unit(`${A}runs/store.ts`)).toBe(`${A}runs/store.ts`);
  expect(folderOf(`${A}runs/store.ts`)).toBe(`${A}runs`);
});

test("(a) no file of a feature imports src/automation/db/ (only the start-up wiring, and a store.ts re-exporting db/tables row types)", () => {
  expect(featureToDb).toEqual([]);
});

test("every wiring exception still imports src/automation/db/ (remove it from WIRING when it no longer does)", () => {
  expect(Object.keys(WIRING).filter((f) => ![...(graph.get(f) ?? [])].some((t) => t.startsWith(DB)))).toEqual([]);
});

test("(b) src/automation/db/ imports of a feature only its store.ts, types and the contract's own values", () => {
  expect(dbToFeature).toEqual([]);
  expect(Object.keys(CONTRACT_VALUES).filter((n) => !valuesUsed.has(n))).toEqual([]);
});

test("(c) no circle between folders of src/automation beyond the known ones", () => {
  const known = Object.values(KNOWN_CIRCLES).map((k) => new Set(k.units));
  expect(folderCircles.filter((c) => !known.some((k) => c.every((u) => k.has(u))))).toEqual([]);
});

test("every folder of a known circle is still on a circle (shrink KNOWN_CIRCLES as they are untied)", () => {
  const onCircle = new Set(folderCircles.flat());
  expect(Object.values(KNOWN_CIRCLES).flatMap((k) => k.units).filter((u) => !onCircle.has(u))).toEqual([]);
});
