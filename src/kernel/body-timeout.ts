// Bodies that stop arriving. Bun keeps a connection whose request is waiting for its body open for as
// long as the handler waits (its idleTimeout only covers sockets with no request in flight), so a
// client that announces `Content-Length: 100` and sends nothing holds a connection forever. Every
// request body is read through a stream that fails with a 408 DomainError when no bytes came for
// `ms`; the app's own onError turns that into its envelope, and the answer carries
// `Connection: close` so Bun drops the socket instead of waiting for the rest of the body.
import { Invalid, TimedOut } from "./errors";
import { andThen } from "./maybe";
import { derivedRequest } from "./observe";

interface Watch {
  timedOut: boolean;
  /** The app read the body to its end. */
  ended: boolean;
  /** Bytes the app has read so far. */
  read: number;
}

/** An early answer (401, 404, 415, ...) keeps its connection when no more than this is left unread. */
export const DRAIN_MAX_BYTES = 64 * 1024;

function watched(request: Request, ms: number, watch: Watch): { out: Request; source: ReadableStreamDefaultReader<Uint8Array> } {
  const source = request.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(ctrl) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const stalled = new Promise<"stalled">((resolve) => {
          timer = setTimeout(() => resolve("stalled"), ms);
        });
        try {
          const next = await Promise.race([source.read(), stalled]);
          if (next === "stalled") {
            watch.timedOut = true;
            source.cancel().catch(() => {});
            ctrl.error(TimedOut(`the request body stopped arriving (no bytes for ${Math.round(ms / 1000)} s)`, { code: "body_timeout" }));
            return;
          }
          if (next.done) {
            watch.ended = true;
            ctrl.close();
          } else {
            watch.read += next.value.byteLength;
            ctrl.enqueue(next.value);
          }
        } catch {
          // Bun's parser found a broken chunked encoding (it has answered a bare 400 and closed the
          // socket), or the client went away: a refusal of the body, not an internal error.
          ctrl.error(Invalid("the request body could not be read: malformed chunked encoding, or the client closed the connection", { code: "invalid_body" }));
        } finally {
          clearTimeout(timer);
        }
      },
      cancel: (reason) => source.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  const out = new Request(request.url, { method: request.method, headers: request.headers, body, signal: request.signal, duplex: "half" } as RequestInit);
  // Bun's router puts the path parameters on its own request object; Elysia's route handlers read them there.
  const params = (request as Request & { params?: unknown }).params;
  if (params !== undefined) Object.defineProperty(out, "params", { value: params, enumerable: true });
  // One request for the request id and the log line's fields (observe.ts), whichever object they see.
  derivedRequest(out, request);
  return { out, source };
}

function closing(res: Response, status = res.status, statusText = res.statusText): Response {
  const headers = new Headers(res.headers);
  headers.set("connection", "close");
  return new Response(res.body, { status, statusText, headers });
}

/**
 * Reads what is left of a body the app did not read, at most `DRAIN_MAX_BYTES` in all and with no
 * more than `ms` in all; true when the body ended, so the connection can carry the next request.
 */
async function drained(source: ReadableStreamDefaultReader<Uint8Array>, left: number, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  try {
    for (;;) {
      const next = await Promise.race([source.read(), late]);
      if (next === "late") return false;
      if (next.done) return true;
      left -= next.value.byteLength;
      if (left < 0) return false;
    }
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An answer given without reading the whole body (an early 401, 404, 413, 415): Bun would keep the
 * connection open waiting for the rest, for as long as the client likes. A small rest is read and
 * dropped within the body timeout and the connection kept; otherwise the answer closes it.
 */
async function early(request: Request, res: Response, source: ReadableStreamDefaultReader<Uint8Array>, watch: Watch, ms: number): Promise<Response> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  const left = declared - watch.read;
  if (Number.isFinite(left) && left <= DRAIN_MAX_BYTES && (await drained(source, left, ms))) return res;
  source.cancel().catch(() => {});
  return closing(res);
}

/**
 * An Elysia higher-order function (`app.wrap`) giving every request body a deadline between chunks.
 * Requests without a body pass through untouched. An answer given before the body was read to its
 * end reads a small rest first (see `early`) or closes the connection.
 */
export function bodyTimeout(ms: number) {
  return (fn: (request: Request) => unknown) =>
    (request: Request): unknown => {
      if (!request.body || !(ms > 0)) return fn(request);
      const watch: Watch = { timedOut: false, ended: false, read: 0 };
      const { out: watchedRequest, source } = watched(request, ms, watch);
      const out = fn(watchedRequest);
      const settle = (res: unknown) => {
        if (!(res instanceof Response) || watch.ended) return res;
        if (watch.timedOut) return closing(res, 408, "Request Timeout");
        return early(request, res, source, watch, ms);
      };
      return andThen(out, settle);
    };
}
