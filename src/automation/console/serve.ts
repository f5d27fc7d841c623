// Serves the web console (web/index.html and what it imports) at `/`. The compiled binary carries the
// bundle Bun's HTML import made at build time (`files`); run from source, the same HTML is bundled once
// on first request with Bun.build. Hash routes (`/#/runs/...`) keep every page on `/`, so the server
// knows two kinds of path only: `/` and the hashed assets the HTML names.
import page from "./web/index.html";
import { pathOf } from "../../kernel/observe";

/**
 * No inline script, nothing from another origin; blob: for previews of artifacts fetched with the key.
 * `storage`: the S3 endpoint's origin when blobs are on S3, the one other origin the page may connect
 * to, because an upload session's presigned PUT goes straight to the bucket (the Files page's uploads).
 */
export function consoleCsp(storage?: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob: data:",
    "font-src 'self'",
    storage ? `connect-src 'self' ${storage}` : "connect-src 'self'",
    "frame-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The policy of a server whose blobs are on its own disk. */
export const CONSOLE_CSP = consoleCsp();

/**
 * A CSP source expression for `origin` (`scheme://host[:port]`, as URL.origin gives it), or undefined
 * when it is not one: nothing but an origin ever reaches the header (no `;`, space or wildcard).
 */
export function cspOrigin(origin: string | undefined): string | undefined {
  if (!origin || !/^https?:\/\/(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i.test(origin)) return undefined;
  return origin;
}

interface Asset {
  body: Blob;
  type: string;
  etag?: string;
}

type Assets = Map<string, Asset>;

const name = (path: string) => "/" + path.split("/").pop();

/** The compiled binary's embedded files, keyed by the URL path the HTML refers to them by. */
function embedded(files: NonNullable<typeof page.files>): Assets {
  const out: Assets = new Map();
  for (const f of files) {
    const asset = { body: Bun.file(f.path), type: f.headers["content-type"], etag: f.headers.etag };
    if (f.loader === "html") out.set("/", asset);
    else out.set(name(f.path), asset);
  }
  return out;
}

/** From source: bundle the HTML entry in memory, as the compiler would (split: the editor is a chunk of its own). */
async function bundled(): Promise<Assets> {
  const result = await Bun.build({ entrypoints: [page.index], target: "browser", minify: true, splitting: true });
  if (!result.success) throw new AggregateError(result.logs, "the console bundle failed");
  const out: Assets = new Map();
  for (const o of result.outputs) {
    const asset = { body: new Blob([await o.arrayBuffer()]), type: o.type, etag: o.hash ?? undefined };
    out.set(o.path.endsWith(".html") ? "/" : name(o.path), asset);
  }
  return out;
}

let assets: Promise<Assets> | undefined;
const load = () => (assets ??= Array.isArray(page.files) ? Promise.resolve(embedded(page.files)) : bundled());

/** Every console asset by URL path (`/` is the page); for the benchmark's size count too. */
export function consoleAssets(): Promise<Assets> {
  return load();
}

/**
 * The console's answer to a GET/HEAD of `/` or of a file name the bundle could hold, else undefined,
 * synchronously (Elysia treats any returned promise as an answer), so the API handles the request.
 * The page is revalidated on every load; hashed assets are immutable. `csp`: consoleCsp() for this server.
 */
export function consoleResponse(request: Request, csp: string = CONSOLE_CSP): Promise<Response> | undefined {
  if (request.method !== "GET" && request.method !== "HEAD") return undefined;
  // Every request passes here (an onRequest hook): the path by string search, not a URL object, and
  // API paths (`/v1/…`, `/api/…`) out at the first character test.
  const path = pathOf(request.url);
  if (path.startsWith("/v1/") || path.startsWith("/api/")) return undefined;
  if (path !== "/" && path !== "/index.html" && !/^\/[\w.-]+\.(js|css|svg|png|woff2?)$/.test(path)) return undefined;
  return load().then((all) => answer(request, path, all.get(path === "/index.html" ? "/" : path), csp));
}

function answer(request: Request, path: string, asset: Asset | undefined, csp: string): Response {
  if (!asset) return new Response("not found", { status: 404, headers: { "content-type": "text/plain;charset=utf-8" } });
  const headers: Record<string, string> = {
    "content-type": asset.type,
    "content-security-policy": csp,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": path === "/" || path === "/index.html" ? "no-cache" : "public, max-age=31536000, immutable",
  };
  if (asset.etag) {
    headers.etag = `"${asset.etag}"`;
    if (request.headers.get("if-none-match") === headers.etag) return new Response(null, { status: 304, headers });
  }
  return new Response(request.method === "HEAD" ? null : asset.body, { headers });
}
