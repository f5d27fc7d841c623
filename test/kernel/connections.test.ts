// The short idle timeout must not cut a slow handler or a pausing NDJSON stream (Bun.serve's single
// idleTimeout covers both); the flags' values are checked. Real sockets on port 0, a tiny Elysia app.
import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { connectionLimits } from "../../src/kernel/connections";
import { listen } from "../../src/kernel/server";

describe("idle timeout of 2 s", () => {
  test("a handler working 6 s answers; an NDJSON answer pausing 6 s between lines arrives whole and closes", async () => {
    const enc = new TextEncoder();
    const app = new Elysia()
      .get("/slow", async () => {
        await Bun.sleep(6000);
        return { done: true };
      })
      .get(
        "/stream",
        () =>
          new Response(
            new ReadableStream<Uint8Array>({
              async start(c) {
                c.enqueue(enc.encode('{"line":1}\n'));
                await Bun.sleep(6000);
                c.enqueue(enc.encode('{"line":2}\n'));
                c.close();
              },
            }),
            { headers: { "content-type": "application/x-ndjson" } },
          ),
      );
    const running = listen(app, { port: 0, hostname: "127.0.0.1", connections: connectionLimits({ "idle-timeout": 2 }) });
    try {
      const [slow, stream] = await Promise.all([fetch(`${running.url}/slow`), fetch(`${running.url}/stream`)]);
      expect(await slow.json()).toEqual({ done: true });
      expect(stream.headers.get("connection")).toBe("close");
      expect(await stream.text()).toBe('{"line":1}\n{"line":2}\n');
    } finally {
      await running.stop();
    }
  }, 20_000);
});

describe("connectionLimits", () => {
  test("defaults, the total from the open-file limit, refused values", () => {
    expect(connectionLimits({}, 20_000)).toEqual({ idleS: 10, perAddress: 256, total: 14_936 });
    expect(connectionLimits({ "max-connections": 100 }, 20_000)).toEqual({ idleS: 10, perAddress: 100, total: 100 });
    expect(() => connectionLimits({ "idle-timeout": 0 })).toThrow("--idle-timeout");
    expect(() => connectionLimits({ "idle-timeout": 300 })).toThrow("--idle-timeout");
    expect(() => connectionLimits({ "max-connections": 20_000 }, 20_000)).toThrow("below the open-file limit");
    expect(() => connectionLimits({ "max-connections-per-address": 0 })).toThrow("--max-connections-per-address");
  });
});
