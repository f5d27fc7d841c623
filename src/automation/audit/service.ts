// The rules of the audit trail: how a request becomes an action name and a resource, the writer that
// appends entries after the response (batched, never lost on a clean shutdown), the list the API
// pages through, export, verify (walks each chain and names the first entry changed, removed or
// reordered) and retention (prunes from the oldest end, leaving the chain's anchor). No HTTP here:
// http.ts turns requests into entries; routes.ts and cli.ts call these functions.
import { Invalid } from "../../kernel/errors";
import type { Logger } from "../../kernel/logger";
import type { AutomationContext } from "../context";
import { entryHash, GENESIS, NO_TENANT, type ActorType, type AuditFilter, type AuditInput, type AuditRow, type AuditStore, type Outcome } from "./store";

/** How often retention prunes (also once at start). */
export const RETENTION_EVERY_MS = 60 * 60 * 1000;
/** How long the writer gathers entries before it writes them (the most a crash can lose besides a batch in flight). */
export const FLUSH_MS = 20;
/** Entries appended in one transaction at most (PostgreSQL binds 16 parameters an entry). */
const BATCH = 500;

/**
 * The action of a route: its static path segments after `/v1` (or `/api/v1`) joined by dots, then a
 * verb. PUT and PATCH → `update`, DELETE → `delete`. POST → `create` when the last segment is a
 * collection (a plural: `POST /v1/runs` → `runs.create`, `POST /v1/automations/:id/versions` →
 * `automations.versions.create`); otherwise the last segment is the verb itself (`POST
 * /v1/runs/:id/cancel` → `runs.cancel`, `POST /v1/human-reviews/:id/approve` → `human-reviews.approve`).
 * Parameters and `*` never appear in an action; they are the resource.
 */
export function actionOf(method: string, route: string): string {
  let byRoute = actions.get(method);
  if (byRoute === undefined) actions.set(method, (byRoute = new Map()));
  let action = byRoute.get(route);
  if (action === undefined) byRoute.set(route, (action = deriveAction(method, route)));
  return action;
}

/** Actions by method, then route template (a route table is finite: each is derived once; no key is built per request). */
const actions = new Map<string, Map<string, string>>();

function deriveAction(method: string, route: string): string {
  const statics = route
    .replace(/^\/(api\/)?v1(?=\/|$)/, "")
    .split("/")
    .filter((s) => s && !s.startsWith(":") && s !== "*");
  const base = statics.join(".");
  if (method === "PUT" || method === "PATCH") return `${base}.update`;
  if (method === "DELETE") return `${base}.delete`;
  const last = route.split("/").filter((s) => s && s !== "*").at(-1) ?? "";
  if (last.startsWith(":") || (/s$/.test(last) && !/ss$/.test(last))) return `${base}.create`;
  return base;
}

/**
 * The resource of a request: the last path parameter (`*` aside) and the static segment naming it
 * (`/v1/automations/:id/versions/:versionId/promote` → `{type: "versions", id}`); a route without
 * parameters names its last segment and the id the answer carried (a create), when there is one.
 */
export function resourceOf(route: string, path: string, createdId?: string): { type: string | null; id: string | null } {
  let shape = shapes.get(route);
  if (shape === undefined) shapes.set(route, (shape = shapeOf(route)));
  if (shape.at === -1) return { type: shape.type, id: createdId ?? null };
  return { type: shape.type, id: decode(path.split("/")[shape.at] ?? "") };
}

/** Where a route's resource is: the segment index of its last parameter (-1: none) and the type naming it. */
function shapeOf(route: string): { at: number; type: string | null } {
  const tpl = route.split("/");
  let at = -1;
  let type: string | null = null;
  let lastStatic: string | null = null;
  for (let i = 0; i < tpl.length; i++) {
    const seg = tpl[i]!;
    if (seg === "*") break;
    if (seg.startsWith(":")) {
      at = i;
      type = lastStatic;
    } else if (seg) lastStatic = seg;
  }
  return at === -1 ? { at, type: lastStatic } : { at, type };
}

/** Resource shapes by route template (a route table is finite: each is derived once). */
const shapes = new Map<string, { at: number; type: string | null }>();

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** What the answer's status says: 2xx/3xx success, 401 failure (no or bad credentials), 403 denied, 429 throttled, other errors failure. */
export function outcomeOf(status: number): Outcome {
  if (status < 400) return "success";
  if (status === 403) return "denied";
  if (status === 429) return "throttled";
  return "failure";
}

/**
 * Appends entries after the responses they describe: an entry may still be gathered when queued (its
 * principal resolving: a promise); the queue is written in batches, one transaction each, in the order
 * entries were queued. `drain` waits for everything queued: the server awaits it before it closes the
 * database, so a clean shutdown loses nothing.
 */
export class AuditWriter {
  private queue: (AuditInput | Promise<AuditInput>)[] = [];
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: AuditStore,
    private readonly log: Logger,
  ) {}

  push(entry: AuditInput | Promise<AuditInput>): void {
    this.queue.push(entry);
    this.kick();
  }

  private kick(): void {
    if (this.running || this.queue.length === 0) return;
    this.running = this.pump().finally(() => {
      this.running = undefined;
      this.kick();
    });
  }

  private async pump(): Promise<void> {
    // Entries of the requests answered within FLUSH_MS share a transaction: under load a batch holds
    // dozens, and what a transaction costs (round trips, a commit) is paid once for all of them.
    await Bun.sleep(FLUSH_MS);
    while (this.queue.length) {
      const taken = this.queue.splice(0, BATCH);
      // Most entries were gathered synchronously; the promises among them (a principal still resolving) are awaited.
      let batch: AuditInput[];
      if (!taken.some((e) => e instanceof Promise)) batch = taken as AuditInput[];
      else {
        batch = [];
        for (const s of await Promise.allSettled(taken)) {
          if (s.status === "fulfilled") batch.push(s.value);
          else this.log.error("audit entry not recorded", { error: (s.reason as Error)?.stack ?? String(s.reason) });
        }
      }
      for (let attempt = 1; batch.length; attempt++) {
        try {
          await this.store.append(batch);
          break;
        } catch (err) {
          if (attempt >= 5) {
            this.log.error("audit entries not recorded", { entries: batch.length, ids: batch.map((e) => e.id).join(","), error: (err as Error)?.message ?? String(err) });
            break;
          }
          await Bun.sleep(50 * attempt);
        }
      }
    }
  }

  /** Resolves when every entry queued so far is written. */
  async drain(): Promise<void> {
    while (this.queue.length || this.running) {
      this.kick();
      await this.running;
    }
  }
}

const writers = new WeakMap<AutomationContext, AuditWriter>();

/** The context's one writer (the HTTP hook queues on it, the server drains it before closing). */
export function auditOf(ctx: AutomationContext): AuditWriter {
  let w = writers.get(ctx);
  if (!w) writers.set(ctx, (w = new AuditWriter(ctx.storage.audit, ctx.log)));
  return w;
}

/** An entry as the API and export show it. */
export interface AuditEntry {
  id: string;
  at: string;
  tenantId: string | null;
  actor: { type: ActorType; id: string | null; name: string | null };
  action: string;
  resource: { type: string | null; id: string | null } | null;
  requestId: string | null;
  address: string | null;
  outcome: Outcome;
  status: number;
  /** The entry's place in its tenant's chain (1, 2, ...), its hash and its predecessor's. */
  position: number;
  hash: string;
  prevHash: string;
}

export function entryOf(r: AuditRow): AuditEntry {
  return {
    id: r.id,
    at: r.at,
    tenantId: r.tenantKey === NO_TENANT ? null : r.tenantKey,
    actor: { type: r.actorType, id: r.actorId, name: r.actorName },
    action: r.action,
    resource: r.resourceType === null && r.resourceId === null ? null : { type: r.resourceType, id: r.resourceId },
    requestId: r.requestId,
    address: r.address,
    outcome: r.outcome,
    status: r.status,
    position: r.seq,
    hash: r.hash,
    prevHash: r.prevHash,
  };
}

export interface AuditQuery {
  actor?: string;
  action?: string;
  resource?: string;
  since?: string;
  until?: string;
  cursor?: string;
  limit: number;
}

const encodeCursor = (seq: number) => Buffer.from(JSON.stringify({ s: seq })).toString("base64url");
function decodeCursor(s: string): number {
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString()) as { s?: unknown };
    if (typeof c.s === "number" && Number.isSafeInteger(c.s) && c.s > 0) return c.s;
  } catch {}
  throw Invalid("cursor is not valid; pass nextCursor from a previous page", { field: "cursor", code: "invalid_cursor" });
}

/** A time bound as stored (ISO, milliseconds, `Z`); a clear 400 otherwise. */
export function isoBound(raw: string, field: string): string {
  const ms = Date.parse(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(ms)) throw Invalid(`${field} must be an ISO 8601 date or time, e.g. 2026-01-31T00:00:00Z`, { field, code: "invalid_value" });
  return new Date(ms).toISOString();
}

/** A page of the tenant's trail, newest first. */
export async function listAudit(store: AuditStore, tenantId: string, q: AuditQuery): Promise<{ data: AuditEntry[]; nextCursor: string | null; hasMore: boolean }> {
  const filter: AuditFilter = {
    tenantKey: tenantId,
    ...(q.actor !== undefined ? { actorId: q.actor } : {}),
    ...(q.action !== undefined ? { action: q.action } : {}),
    ...(q.resource !== undefined ? { resourceId: q.resource } : {}),
    ...(q.since !== undefined ? { since: isoBound(q.since, "since") } : {}),
    ...(q.until !== undefined ? { until: isoBound(q.until, "until") } : {}),
  };
  const rows = await store.list(filter, q.limit + 1, q.cursor ? decodeCursor(q.cursor) : undefined);
  const more = rows.length > q.limit;
  const page = more ? rows.slice(0, q.limit) : rows;
  return { data: page.map(entryOf), nextCursor: more ? encodeCursor(page.at(-1)!.seq) : null, hasMore: more };
}

/** The chain's entries oldest first, within [since, until), a page at a time (export). */
export async function* exportAudit(store: AuditStore, tenantKey: string, since?: string, until?: string): AsyncGenerator<AuditEntry> {
  const filter: AuditFilter = { tenantKey, ...(since ? { since } : {}), ...(until ? { until } : {}) };
  let after = 0;
  for (;;) {
    const rows = await store.range(filter, after, 1000);
    for (const r of rows) yield entryOf(r);
    if (rows.length < 1000) return;
    after = rows.at(-1)!.seq;
  }
}

export type Verdict =
  | { ok: true; tenantKey: string; entries: number; from: number }
  | { ok: false; tenantKey: string; entries: number; entryId: string | null; position: number; problem: string };

/**
 * Walks one chain from its anchor (or the genesis) to its head and stops at the first entry that does
 * not hold: its contents no longer match its hash (changed), positions are missing before it (removed),
 * it links to an entry found later in the chain (reordered), or it links to something other than the
 * entry before it (that one was changed and re-hashed, or replaced). Entries missing at the end show
 * against the head row, which every append moves.
 */
export async function verifyChain(store: AuditStore, tenantKey: string): Promise<Verdict> {
  const anchor = await store.anchor(tenantKey);
  let prev = anchor ? { seq: anchor.seq, hash: anchor.hash, id: null as string | null } : { seq: 0, hash: GENESIS, id: null as string | null };
  const from = prev.seq + 1;
  let entries = 0;
  const bad = (r: { id: string | null; seq: number }, problem: string): Verdict => ({ ok: false, tenantKey, entries, entryId: r.id, position: r.seq, problem });
  for (let after = prev.seq; ; ) {
    const rows = await store.range({ tenantKey }, after, 1000);
    for (const r of rows) {
      if (entryHash(r, r.prevHash) !== r.hash) return bad(r, "changed: its contents no longer match its hash");
      if (r.seq > prev.seq + 1) {
        const missing = r.seq - prev.seq - 1;
        return bad(r, `removed: ${missing === 1 ? `the entry at position ${prev.seq + 1} is` : `the entries at positions ${prev.seq + 1}-${r.seq - 1} are`} missing before it`);
      }
      if (r.prevHash !== prev.hash) {
        const linked = await store.byHash(tenantKey, r.prevHash);
        if (linked && linked.seq > r.seq) return bad(r, `reordered: it follows entry ${linked.id}, which is at position ${linked.seq}, after it`);
        if (prev.id === null) return bad(r, `removed or changed: it does not link to the chain's ${anchor ? "anchor (the last pruned entry)" : "start"}`);
        return bad({ id: prev.id, seq: prev.seq }, `changed: its hash is not the one entry ${r.id} (position ${r.seq}) links to (re-hashed or replaced)`);
      }
      prev = { seq: r.seq, hash: r.hash, id: r.id };
      entries++;
    }
    if (rows.length < 1000) break;
    after = rows.at(-1)!.seq;
  }
  const head = await store.head(tenantKey);
  if (head && head.seq > prev.seq) {
    return bad({ id: prev.id, seq: prev.seq + 1 }, `removed: the chain's head is at position ${head.seq}, its last ${head.seq - prev.seq} entr${head.seq - prev.seq === 1 ? "y is" : "ies are"} missing`);
  }
  if (head && head.seq === prev.seq && head.hash !== prev.hash) return bad({ id: prev.id, seq: prev.seq }, "changed: its hash is not the one the chain's head records");
  return { ok: true, tenantKey, entries, from };
}

/** Prunes entries older than `retentionMs` from every chain's oldest end; how many went. */
export function pruneAudit(store: AuditStore, now: Date, retentionMs: number): Promise<number> {
  return store.prune(new Date(now.getTime() - retentionMs).toISOString(), now.toISOString());
}

/** `--audit-retention`: prunes at start and every hour; nothing without it (entries are kept forever). */
export function startRetention(ctx: AutomationContext): { stop(): Promise<void> } {
  const keep = ctx.config.auditRetentionMs;
  if (!keep) return { stop: async () => {} };
  let running: Promise<unknown> | undefined;
  const tick = () => {
    if (running) return;
    running = pruneAudit(ctx.storage.audit, ctx.clock.now(), keep)
      .then((n) => {
        if (n) ctx.log.info("audit retention", { pruned: n });
      })
      .catch((err) => ctx.log.error("audit retention failed", { error: (err as Error)?.stack ?? String(err) }))
      .finally(() => (running = undefined));
  };
  tick();
  const timer = setInterval(tick, RETENTION_EVERY_MS);
  timer.unref?.();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
