import { Invalid } from "../../kernel/errors";
import { type PageRequest, SORT_FIELDS, type SortField, type SortKey } from "./model";

const MAX_SIZE = 100;
const DEFAULT_SORT: SortKey[] = [{ field: "createdDate", dir: "desc" }];

/** `page` (0-based), `size` (1–100) and repeatable `sort=field[,asc|desc]` from a query string. */
export function parsePage(params: URLSearchParams): PageRequest {
  const page = intParam(params, "page", 0, 0, 1_000_000_000);
  const size = intParam(params, "size", 20, 1, MAX_SIZE);
  const sort: SortKey[] = [];
  for (const raw of params.getAll("sort")) {
    if (raw.trim() === "") continue;
    const [name, dir, ...rest] = raw.split(",").map((s) => s.trim());
    if (!(SORT_FIELDS as readonly string[]).includes(name)) {
      throw Invalid(`sort: unknown field "${name}"; use one of ${SORT_FIELDS.join(", ")}`, { field: "sort" });
    }
    const d = (dir ?? "asc").toLowerCase();
    if ((d !== "asc" && d !== "desc") || rest.length > 0) {
      throw Invalid(`sort: "${raw}" must be field, field,asc or field,desc`, { field: "sort" });
    }
    if (!sort.some((s) => s.field === name)) sort.push({ field: name as SortField, dir: d });
  }
  return { page, size, sort: sort.length ? sort : DEFAULT_SORT };
}

function intParam(params: URLSearchParams, name: string, dflt: number, min: number, max: number): number {
  const all = params.getAll(name);
  if (all.length === 0) return dflt;
  if (all.length > 1) throw Invalid(`${name} must be given once`, { field: name });
  const raw = all[0].trim();
  if (!/^\d+$/.test(raw)) throw Invalid(`${name} must be an integer between ${min} and ${max} (got "${all[0]}")`, { field: name });
  const n = Number(raw);
  if (n < min || n > max) throw Invalid(`${name} must be between ${min} and ${max} (got ${raw})`, { field: name });
  return n;
}

/**
 * RFC 8288 `Link` with first/prev/next/last, keeping the request's other parameters but never an
 * `access_token` (a credential must not be copied into links a client may log, share or follow).
 */
export function linkHeader(url: URL, req: PageRequest, total: number): string {
  const last = Math.max(0, Math.ceil(total / req.size) - 1);
  // The query's pairs, encoded once, with page and size in their first place (else at the end, as
  // URLSearchParams.set would put them). Every link is then `head` + a page number + `tail` + its rel:
  // one pass over the query and one string per link (a server answering pages makes one per miss).
  const pairs: string[] = [];
  let pageAt = -1;
  let sizeAt = -1;
  for (const [k, v] of url.searchParams) {
    if (k === "access_token") continue;
    if (k === "page" || k === "size") {
      if (k === "page" && pageAt < 0) pageAt = pairs.push("page=") - 1;
      if (k === "size" && sizeAt < 0) sizeAt = pairs.push(`size=${req.size}`) - 1;
      continue;
    }
    pairs.push(new URLSearchParams([[k, v]]).toString());
  }
  if (pageAt < 0) pageAt = pairs.push("page=") - 1;
  if (sizeAt < 0) pairs.push(`size=${req.size}`);
  const head = `<${url.origin}${url.pathname}?${pairs.slice(0, pageAt + 1).join("&")}`;
  const rest = pairs.slice(pageAt + 1);
  const tail = rest.length ? `&${rest.join("&")}>; rel="` : '>; rel="';
  let links = `${head}0${tail}first"`;
  if (req.page > 0) links += `, ${head}${Math.min(req.page - 1, last)}${tail}prev"`;
  if (req.page < last) links += `, ${head}${req.page + 1}${tail}next"`;
  return `${links}, ${head}${last}${tail}last"`;
}
