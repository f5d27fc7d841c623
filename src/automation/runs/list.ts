// `GET /v1/runs` query → store filter, and the page/cursor around it. The cursor is (sort key, id) of
// the last row: ids are time-sortable and unique, so a page boundary never repeats or skips a run
// that existed when paging started, whatever is inserted meanwhile.
import { Invalid } from "../../kernel/errors";
import type { ListQuery } from "./model";
import type { ListFilter, ReviewFilter, RunRow } from "./store";

interface Cursor {
  k: string;
  i: string;
  s: string;
  o: string;
}

const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString("base64url");

function decodeCursor(s: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(s, "base64url").toString()) as Cursor;
    if (typeof c.k === "string" && typeof c.i === "string" && typeof c.s === "string" && typeof c.o === "string") return c;
  } catch {}
  throw Invalid("cursor is not valid; pass nextCursor from a previous page", { field: "cursor", code: "invalid_cursor" });
}

function experimentsFilter(s: string | undefined): ListFilter["experiments"] {
  if (!s) return undefined;
  const v = s.trim().toLowerCase();
  if (v === "include" || v === "all" || v === "true") return { mode: "include" };
  if (v === "exclude" || v === "false" || v === "none") return { mode: "exclude" };
  if (v === "only") return { mode: "only" };
  const ids = s.split(",").map((x) => x.trim()).filter(Boolean);
  if (!ids.every((x) => /^exp_\w+$/.test(x))) {
    throw Invalid("experiments must be include, exclude, only or a comma list of experiment ids", { field: "experiments" });
  }
  return { ids };
}

const yes = (s: string | undefined) => s === "true" || s === "1";

const flag = (s: string | undefined) => (s === undefined ? undefined : yes(s));

/** The review filters (run reviews, reviews/): conditions on each run's review row. */
function reviewFilter(q: ListQuery): ReviewFilter {
  return {
    reviewStatus: q.reviewStatus,
    reviewVerdict: q.reviewVerdict,
    reviewNoteContains: q.reviewNoteContains,
    reviewCreatedAfter: q.reviewCreatedAfter,
    reviewCreatedBefore: q.reviewCreatedBefore,
    reviewUpdatedAfter: q.reviewUpdatedAfter,
    reviewUpdatedBefore: q.reviewUpdatedBefore,
    reviewClosedAfter: q.reviewClosedAfter,
    reviewClosedBefore: q.reviewClosedBefore,
    hasReview: flag(q.hasReview),
    noReview: flag(q.noReview),
    hasCorrections: flag(q.hasCorrections),
    sinceLastClosed: flag(q.sinceLastClosed),
  };
}

/** The store filter for a page: one row more than `limit`, to know whether another page follows. */
export function listFilter(tenantId: string, q: ListQuery): ListFilter {
  const f: ListFilter = {
    tenantId,
    type: q.type,
    source: q.source,
    statuses: q.status,
    trigger: q.trigger,
    triggeredBy: q.triggeredBy,
    sourceRef: q.sourceRef,
    batchId: q.batchId,
    exampleId: q.exampleId,
    exampleIdContains: q.exampleIdContains,
    createdFrom: q.from,
    createdTo: q.to,
    createdAfter: q.createdAfter,
    createdBefore: q.createdBefore,
    completedAfter: q.completedAfter,
    completedBefore: q.completedBefore,
    ids: q.ids,
    experiments: experimentsFilter(q.experiments),
    sampleRate: q.sampleRate,
    review: reviewFilter(q),
    sort: q.sort,
    order: q.order,
    offset: q.offset,
    limit: q.limit + 1,
  };
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    if (c.s !== q.sort || c.o !== q.order) throw Invalid("the cursor belongs to a different sort or order", { field: "cursor", code: "invalid_cursor" });
    f.after = { key: c.k, id: c.i };
  }
  return f;
}

export function page(rows: RunRow[], q: ListQuery): { rows: RunRow[]; nextCursor: string | null } {
  const more = rows.length > q.limit;
  const kept = more ? rows.slice(0, q.limit) : rows;
  const last = kept.at(-1);
  const key = (r: RunRow) => (q.sort === "completedAt" ? r.completedAt : q.sort === "startedAt" ? r.startedAt : r.createdAt) ?? "";
  return { rows: kept, nextCursor: more && last ? encodeCursor({ k: key(last), i: last.id, s: q.sort, o: q.order }) : null };
}
