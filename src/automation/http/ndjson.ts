// A progress stream as `application/x-ndjson`: `follow` subscribes with an emitter of lines and a
// done callback and returns its unsubscribe. Closing the connection only stops following; what is
// followed (an experiment, a backtest) goes on.
import { longLived } from "../../kernel/connections";

export type Follow<L> = (emit: (line: L) => void, done: () => void) => () => void;

export function ndjsonResponse<L>(follow: Follow<L>, headers: Record<string, string> = {}): Response {
  const enc = new TextEncoder();
  let stop = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const emit = (line: L) => {
        try {
          controller.enqueue(enc.encode(`${JSON.stringify(line)}\n`));
        } catch {
          stop();
        }
      };
      stop = follow(emit, () => {
        try {
          controller.close();
        } catch {}
      });
    },
    cancel() {
      stop();
    },
  });
  return longLived(new Response(stream, { headers: { "content-type": "application/x-ndjson", "cache-control": "no-store", ...headers } }));
}
