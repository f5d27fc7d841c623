// The incremental index in $XDG_CACHE_HOME/quotas/usage/: per log file its inode, size, mtime and the
// byte offset read so far, plus token sums per (file, 15-minute bucket, model, tier) and the dedupe keys.
// A second run reads only the bytes appended since; a file that shrank, vanished or was replaced
// (another inode) makes the index start over, since its entries may have hidden duplicates elsewhere.
// Writers take a lock file; every file is written under a new name and manifest.json, renamed last,
// is the commit point, so a reader or a crash never sees half an index.
import { closeSync, existsSync, mkdirSync, openSync, readSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import * as v from "valibot";
import { cacheDir, dirname, join, type Ctx } from "../core/context";
import { readText, tryLock, unlock, writeAtomic } from "../core/files";
import { hash53, KeySet } from "./keyset";
import { claudeLine, codexLine, CODEX_FALLBACK_MODEL, IGNORED, MALFORMED, newRec, TOKEN_COUNT, TURN_CONTEXT, USAGE, type CodexState, type Rec } from "./parse";
import { AGENTS, logFiles, type Agent, type LogFile } from "./sources";

const VERSION = 1;
/** Rows: [file, bucket, model, long, input, output, cacheRead, cacheWrite5m, cacheWrite1h, count, minTs, maxTs]. */
export const STRIDE = 12;
export const BUCKET_MS = 15 * 60_000;
/** A request whose prompt is over this many tokens is a long-context one (priced at `long` rates when the model has them). */
export const LONG_ABOVE = 200_000;

export interface IndexedFile {
  path: string;
  agent: Agent;
  ino: number;
  size: number;
  mtimeMs: number;
  offset: number;
  entries: number;
  duplicates: number;
  malformed: number;
  codex?: { model: string; total: [number, number, number] | null };
}

// Files are stored as columns: thousands of log files validate as a few number arrays, not thousands
// of objects (the manifest is read on every run).
const nums = v.array(v.number());
const ManifestSchema = v.object({
  version: v.literal(VERSION),
  gen: v.number(),
  models: v.array(v.string()),
  files: v.object({
    path: v.array(v.string()),
    agent: v.array(v.picklist(AGENTS)),
    ino: nums,
    size: nums,
    mtimeMs: nums,
    offset: nums,
    entries: nums,
    duplicates: nums,
    malformed: nums,
    /** Codex: current model ("" for Claude) and last running total (-1 -1 -1 when none) */
    codexModel: v.array(v.string()),
    codexTotal: nums,
  }),
  rows: v.string(),
  keys: v.string(),
  keyCount: v.number(),
  delta: v.string(),
  deltaCount: v.number(),
});
type Columns = v.InferOutput<typeof ManifestSchema>["files"];
type Manifest = Omit<v.InferOutput<typeof ManifestSchema>, "files"> & { files: IndexedFile[] };

function toColumns(files: IndexedFile[]): Columns {
  const c: Columns = { path: [], agent: [], ino: [], size: [], mtimeMs: [], offset: [], entries: [], duplicates: [], malformed: [], codexModel: [], codexTotal: [] };
  for (const f of files) {
    c.path.push(f.path);
    c.agent.push(f.agent);
    c.ino.push(f.ino);
    c.size.push(f.size);
    c.mtimeMs.push(f.mtimeMs);
    c.offset.push(f.offset);
    c.entries.push(f.entries);
    c.duplicates.push(f.duplicates);
    c.malformed.push(f.malformed);
    c.codexModel.push(f.codex?.model ?? "");
    const t = f.codex?.total ?? [-1, -1, -1];
    c.codexTotal.push(t[0], t[1], t[2]);
  }
  return c;
}

function fromColumns(c: Columns): IndexedFile[] | null {
  const n = c.path.length;
  for (const col of [c.agent, c.ino, c.size, c.mtimeMs, c.offset, c.entries, c.duplicates, c.malformed, c.codexModel]) if (col.length !== n) return null;
  if (c.codexTotal.length !== 3 * n) return null;
  const out: IndexedFile[] = [];
  for (let i = 0; i < n; i++) {
    const f: IndexedFile = { path: c.path[i], agent: c.agent[i], ino: c.ino[i], size: c.size[i], mtimeMs: c.mtimeMs[i], offset: c.offset[i], entries: c.entries[i], duplicates: c.duplicates[i], malformed: c.malformed[i] };
    if (f.agent === "codex") {
      const t = c.codexTotal.slice(3 * i, 3 * i + 3) as [number, number, number];
      f.codex = { model: c.codexModel[i], total: t[0] < 0 ? null : t };
    }
    out.push(f);
  }
  return out;
}

export interface Index {
  models: string[];
  files: IndexedFile[];
  rows: Float64Array;
  /** what this run did: bytes read, files read, whether it started over */
  stats: { bytesRead: number; filesRead: number; rebuilt: boolean; waitedMs: number };
}

export const indexDir = (ctx: Ctx) => join(cacheDir(ctx), "usage");

function readManifest(dir: string): Manifest | null {
  const text = readText(join(dir, "manifest.json"));
  if (!text) return null;
  try {
    const m = v.safeParse(ManifestSchema, JSON.parse(text));
    if (!m.success) return null;
    const files = fromColumns(m.output.files);
    return files ? { ...m.output, files } : null;
  } catch {
    return null;
  }
}

function mapF64(path: string): Float64Array | null {
  try {
    const bytes = Bun.mmap(path);
    return bytes.byteLength ? new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8) : new Float64Array(0);
  } catch {
    return null;
  }
}

/** Growable Float64Array. */
class Rows {
  a = new Float64Array(STRIDE * 1024);
  n = 0;
  push(): number {
    if ((this.n + 1) * STRIDE > this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    return this.n++ * STRIDE;
  }
}

async function lock(path: string): Promise<number> {
  const start = Date.now();
  // a cold index of years of logs takes seconds; a holder that died leaves a lock older than 10 minutes
  while (!tryLock(path, 10 * 60_000)) {
    if (Date.now() - start > 15 * 60_000) break;
    await Bun.sleep(25);
  }
  return Date.now() - start;
}

/** Brings the index up to date with the logs and returns it. */
export async function updateIndex(ctx: Ctx): Promise<Index> {
  const dir = indexDir(ctx);
  const lockPath = join(dir, "index.lock");
  try {
    mkdirSync(dir, { recursive: true });
  } catch {
    return update(dir, logFiles(ctx), false); // no cache directory to write: read the logs, keep nothing
  }
  const waitedMs = await lock(lockPath);
  try {
    const ix = update(dir, logFiles(ctx));
    ix.stats.waitedMs = waitedMs;
    return ix;
  } finally {
    unlock(lockPath);
  }
}

function update(dir: string, logs: LogFile[], persist = true): Index {
  let m = readManifest(dir);
  const known = new Map((m?.files ?? []).map((f) => [f.path, f]));
  const present = new Set(logs.map((l) => l.path));
  let rebuilt = !m;
  for (const l of logs) {
    const f = known.get(l.path);
    if (f && (f.ino !== l.ino || l.size < f.offset || (l.size === f.size && l.mtimeMs !== f.mtimeMs && l.size === f.offset))) rebuilt = true;
  }
  for (const p of known.keys()) if (!present.has(p)) rebuilt = true;
  let oldRows: Float64Array = new Float64Array(0);
  let base = new KeySet(new Float64Array(0));
  let delta = new KeySet();
  if (m && !rebuilt) {
    const rows = mapF64(join(dir, m.rows));
    const keys = mapF64(join(dir, m.keys));
    const d = mapF64(join(dir, m.delta));
    if (!rows || !keys || !d) rebuilt = true;
    else {
      oldRows = rows;
      base = new KeySet(keys, m!.keyCount);
      delta = d.length ? new KeySet(d, m!.deltaCount) : new KeySet();
    }
  }
  if (rebuilt) {
    m = null;
    known.clear();
    oldRows = new Float64Array(0);
    base = new KeySet(new Float64Array(0));
    delta = new KeySet();
  }
  const models = m ? [...m.models] : [];
  const modelIdx = new Map(models.map((x, i) => [x, i]));
  const files: IndexedFile[] = [];
  const rows = new Rows();
  const seen = (k: number) => (base.table.length > 0 && base.has(k)) || delta.has(k);
  let bytesRead = 0;
  let filesRead = 0;
  for (const l of logs) {
    const prev = known.get(l.path);
    const f: IndexedFile = prev
      ? { ...prev, size: l.size, mtimeMs: l.mtimeMs }
      : { path: l.path, agent: l.agent, ino: l.ino, size: l.size, mtimeMs: l.mtimeMs, offset: 0, entries: 0, duplicates: 0, malformed: 0 };
    if (l.agent === "codex" && !f.codex) f.codex = { model: CODEX_FALLBACK_MODEL, total: null };
    const fileIdx = files.length;
    files.push(f);
    if (l.size <= f.offset) continue;
    filesRead++;
    bytesRead += scanFile(f, fileIdx, {
      model: (name) => {
        let i = modelIdx.get(name);
        if (i === undefined) {
          i = models.length;
          models.push(name);
          modelIdx.set(name, i);
        }
        return i;
      },
      seen,
      add: (k) => delta.add(k),
      rows,
    });
  }
  // the old rows keep their file numbers while the file list keeps its order (new files sort last);
  // otherwise renumber by path
  const oldFiles = m?.files ?? [];
  const same = oldFiles.every((f, i) => files[i]?.path === f.path);
  if (filesRead === 0 && same && m && files.length === oldFiles.length) return { models, files, rows: oldRows, stats: { bytesRead, filesRead, rebuilt, waitedMs: 0 } };
  const all = new Float64Array(oldRows.length + rows.n * STRIDE);
  all.set(oldRows);
  if (!same) {
    const renumber = new Map(files.map((f, i) => [f.path, i]));
    const remap = oldFiles.map((f) => renumber.get(f.path) ?? -1);
    for (let i = 0; i < oldRows.length; i += STRIDE) all[i] = remap[all[i]];
  }
  all.set(rows.a.subarray(0, rows.n * STRIDE), oldRows.length);
  if (persist && (rebuilt || filesRead > 0 || !m)) {
    try {
      write(dir, m, { models, files, rows: all, base, delta });
    } catch {
      // a full disk or a read-only cache: this run's report stands, the next run reads again
    }
  }
  return { models, files, rows: all, stats: { bytesRead, filesRead, rebuilt, waitedMs: 0 } };
}

function write(dir: string, m: Manifest | null, x: { models: string[]; files: IndexedFile[]; rows: Float64Array; base: KeySet; delta: KeySet }): void {
  const gen = (m?.gen ?? 0) + 1;
  const bytes = (a: Float64Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  let keys = m?.keys ?? "";
  let base = x.base;
  let delta = x.delta;
  // a delta over a quarter of the base is merged into a new base
  if (!m || delta.size * 4 > base.size) {
    const merged = new KeySet(pow2((base.size + delta.size) * 2 + 1024));
    for (const k of base.keys()) merged.add(k);
    for (const k of delta.keys()) merged.add(k);
    base = merged;
    delta = new KeySet(1024);
    keys = `keys-${gen}.bin`;
    writeBin(join(dir, keys), bytes(base.table));
  }
  const rows = `rows-${gen}.bin`;
  const deltaName = `keysd-${gen}.bin`;
  writeBin(join(dir, rows), bytes(x.rows));
  writeBin(join(dir, deltaName), bytes(delta.table));
  const next: Manifest = { version: VERSION, gen, models: x.models, files: x.files, rows, keys, keyCount: base.size, delta: deltaName, deltaCount: delta.size };
  writeAtomic(join(dir, "manifest.json"), JSON.stringify({ ...next, files: toColumns(next.files) }));
  for (const n of readdirSync(dir)) {
    if (/^(rows|keys|keysd)-\d+\.bin$/.test(n) && n !== rows && n !== keys && n !== deltaName) rmSync(join(dir, n), { force: true });
  }
}

const pow2 = (n: number) => 2 ** Math.ceil(Math.log2(Math.max(n, 1024)));

function writeBin(path: string, data: Uint8Array): void {
  const tmp = `${path}.${process.pid}.tmp`;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

interface Sink {
  model(name: string): number;
  seen(key: number): boolean;
  add(key: number): void;
  rows: Rows;
}

const CHUNK = 8 * 1024 * 1024;
let shared = Buffer.allocUnsafe(CHUNK);

/** Reads `f` from its offset to its last complete line, adding rows and keys; returns bytes read. */
function scanFile(f: IndexedFile, fileIdx: number, sink: Sink): number {
  let fd: number;
  try {
    fd = openSync(f.path, "r");
  } catch {
    return 0;
  }
  const rowAt = new Map<number, number>();
  const r = newRec();
  const codex: CodexState | undefined = f.codex ? { model: f.codex.model, total: f.codex.total } : undefined;
  const start = f.offset;
  let pos = f.offset; // file position of buf[0]
  let carry = 0;
  try {
    for (;;) {
      if (carry === shared.length) {
        const bigger = Buffer.allocUnsafe(shared.length * 2); // a line longer than the buffer
        shared.copy(bigger, 0, 0, carry);
        shared = bigger;
      }
      const n = readSync(fd, shared, carry, shared.length - carry, pos + carry);
      if (n === 0) break; // a last line without its newline waits for the next run
      const len = carry + n;
      const end = shared.lastIndexOf(10, len - 1) + 1; // after the last complete line
      if (end > 0) {
        const buf = shared.subarray(0, end);
        if (codex) scanCodex(buf, codex, r, f, fileIdx, sink, rowAt);
        else scanClaude(buf, r, f, fileIdx, sink, rowAt);
        pos += end;
      }
      carry = len - end;
      if (carry > 0) shared.copy(shared, 0, end, len);
    }
  } finally {
    closeSync(fd);
  }
  f.offset = pos;
  if (codex && f.codex) f.codex = { model: codex.model, total: codex.total };
  return pos - start;
}

function record(r: Rec, f: IndexedFile, fileIdx: number, sink: Sink, rowAt: Map<number, number>): void {
  const model = sink.model(r.model);
  const long = r.input + r.cacheRead + r.cacheWrite5m + r.cacheWrite1h > LONG_ABOVE ? 1 : 0;
  const bucket = Math.floor(r.ts / BUCKET_MS);
  const key = (bucket * 1024 + model) * 2 + long;
  let at = rowAt.get(key);
  const a0 = sink.rows;
  if (at === undefined) {
    at = a0.push();
    const a = a0.a;
    a[at] = fileIdx;
    a[at + 1] = bucket;
    a[at + 2] = model;
    a[at + 3] = long;
    a[at + 10] = r.ts;
    a[at + 11] = r.ts;
    rowAt.set(key, at);
  }
  const a = a0.a;
  a[at + 4] += r.input;
  a[at + 5] += r.output;
  a[at + 6] += r.cacheRead;
  a[at + 7] += r.cacheWrite5m;
  a[at + 8] += r.cacheWrite1h;
  a[at + 9]++;
  if (r.ts < a[at + 10]) a[at + 10] = r.ts;
  if (r.ts > a[at + 11]) a[at + 11] = r.ts;
  f.entries++;
}

function scanClaude(buf: Buffer, r: Rec, f: IndexedFile, fileIdx: number, sink: Sink, rowAt: Map<number, number>): void {
  let from = 0;
  for (;;) {
    const u = buf.indexOf(USAGE, from);
    if (u === -1) return;
    const s = buf.lastIndexOf(10, u) + 1;
    let e = buf.indexOf(10, u);
    if (e === -1) e = buf.length;
    from = e + 1;
    const line = buf.subarray(s, buf[e - 1] === 13 ? e - 1 : e);
    const res = claudeLine(line, u - s, r);
    if (res === MALFORMED) f.malformed++;
    if (res !== 1) continue;
    if (r.mid) {
      // the same message and request id counts once; a sidechain replay of a message (same id, new
      // request id) counts once as well (ccusage's rule)
      const exact = hash53(`${r.mid}\u0000${r.rid}`);
      const main = hash53(r.mid, 1);
      const side = hash53(r.mid, 2);
      if (sink.seen(exact) || sink.seen(side) || (r.sidechain && sink.seen(main))) {
        f.duplicates++;
        continue;
      }
      sink.add(exact);
      sink.add(r.sidechain ? side : main);
    }
    record(r, f, fileIdx, sink, rowAt);
  }
}

function scanCodex(buf: Buffer, s: CodexState, r: Rec, f: IndexedFile, fileIdx: number, sink: Sink, rowAt: Map<number, number>): void {
  let from = 0;
  let tc = buf.indexOf(TOKEN_COUNT, 0);
  let ctx = buf.indexOf(TURN_CONTEXT, 0);
  for (;;) {
    if (tc !== -1 && tc < from) tc = buf.indexOf(TOKEN_COUNT, from);
    if (ctx !== -1 && ctx < from) ctx = buf.indexOf(TURN_CONTEXT, from);
    const at = tc === -1 ? ctx : ctx === -1 ? tc : Math.min(tc, ctx);
    if (at === -1) return;
    const start = buf.lastIndexOf(10, at) + 1;
    let e = buf.indexOf(10, at);
    if (e === -1) e = buf.length;
    from = e + 1;
    const res = codexLine(buf.subarray(start, buf[e - 1] === 13 ? e - 1 : e), s, r);
    if (res === MALFORMED) f.malformed++;
    if (res === IGNORED || res === MALFORMED) continue;
    record(r, f, fileIdx, sink, rowAt);
  }
}

export const indexExists = (ctx: Ctx) => existsSync(join(indexDir(ctx), "manifest.json"));
export type { Agent };
