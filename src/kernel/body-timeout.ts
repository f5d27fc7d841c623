// Bodies that stop arriving. Bun keeps a connection whose request is waiting for its body open for as
// long as the handler waits (its idleTimeout only covers sockets with no request in flight), so a
// client that announces `Content-Length: 100` and sends nothing holds a connection forever. Every
// request body is read through a stream that fails with a 408 DomainError when no bytes came for
// `ms`; the app's own onError turns that into its envelope, and the answer carries
// `Connection: close` so Bun drops the socket instead of waiting for the rest of the body.
import { Invalid, TimedOut } from "./errors";
import { derivedRequest } from "./observe";

interface Watch {
  timedOut: boolean;
}

function watched(request: Request, ms: number, watch: Watch): Request {
  const source = request.body!.getReader();
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
          if (next.done) ctrl.close();
          else ctrl.enqueue(next.value);
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
  return out;
}

function closing(res: Response): Response {
  const headers = new Headers(res.headers);
  headers.set("connection", "close");
  return new Response(res.body, { status: 408, statusText: "Request Timeout", headers });
}

/**
 * An Elysia higher-order function (`app.wrap`) giving every request body a deadline between chunks.
 * Requests without a body pass through untouched.
 */
export function bodyTimeout(ms: number) {
  return (fn: (request: Request) => unknown) =>
    (request: Request): unknown => {
      if (!request.body || !(ms > 0)) return fn(request);
      const watch: Watch = { timedOut: false };
      const out = fn(watched(request, ms, watch));
      const settle = (res: unknown) => (watch.timedOut && res instanceof Response ? closing(res) : res);
      return out instanceof Promise ? out.then(settle) : settle(out);
    };
}
