// The short idle timeout must not cut a slow handler or a pausing NDJSON stream (marked `longLived`) (Bun.serve's single
// idleTimeout covers both); the flags' values are checked. Real sockets on port 0, a tiny Elysia app.
import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { addressKey, connectionLimits, longLived, socketTables } from "../../src/kernel/connections";
import { listen } from "../../src/kernel/server";

describe("idle timeout of 2 s", () => {
  // Bun counts socket timeouts in ticks of one 4 s timer for the whole process, so the arrivals are
  // spread over a tick: a request arriving just before one was cut 0.5 s in (one in eight here, and
  // twice in CI where the tick's phase is whatever earlier tests left).
  test("handlers working 5 s answer whenever in Bun's 4 s tick they arrive; an NDJSON answer pausing 5 s arrives whole and closes; a quick answer's connection still closes within a tick", async () => {
    const enc = new TextEncoder();
    const app = new Elysia()
      .get("/slow", async () => {
        await Bun.sleep(5000);
        return { done: true };
      })
      .get("/fast", () => "ok")
      .get(
        "/stream",
        () =>
          // Marked where it is made, as src/automation/http/ndjson.ts marks its streams.
          longLived(new Response(
            new ReadableStream<Uint8Array>({
              async start(c) {
                c.enqueue(enc.encode('{"line":1}\n'));
                await Bun.sleep(5000);
                c.enqueue(enc.encode('{"line":2}\n'));
                c.close();
              },
            }),
            { headers: { "content-type": "application/x-ndjson" } },
          )),
      );
    const running = listen(app, { port: 0, hostname: "127.0.0.1", connections: connectionLimits({ "idle-timeout": 2 }) });
    try {
      // A keep-alive connection with one quick answer: closed at the next tick (0-4 s), as without the guard.
      let answeredAt = 0;
      let closedAfter = -1;
      const kept = await Bun.connect({
        hostname: "127.0.0.1",
        port: running.port,
        socket: {
          data: () => void (answeredAt ||= performance.now()),
          close: () => void (closedAfter = performance.now() - answeredAt),
        },
      });
      kept.write("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n");
      const stream = fetch(`${running.url}/stream`);
      const slow = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          await Bun.sleep(i * 500);
          const t0 = performance.now();
          try {
            const res = await fetch(`${running.url}/slow`);
            return JSON.stringify(await res.json());
          } catch (err) {
            return `${(err as { code?: string }).code} after ${Math.round(performance.now() - t0)} ms`;
          }
        }),
      );
      expect(slow).toEqual(Array(8).fill('{"done":true}'));
      const streamed = await stream;
      expect(streamed.headers.get("connection")).toBe("close");
      expect(await streamed.text()).toBe('{"line":1}\n{"line":2}\n');
      expect(answeredAt).toBeGreaterThan(0);
      expect(closedAfter).toBeGreaterThanOrEqual(0);
      expect(closedAfter).toBeLessThan(4500);
    } finally {
      await running.stop();
    }
  }, 30_000);
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

describe("the socket table (the bounds are counted from it)", () => {
  test("counts the connections to one port by client address, as requestIP names them", async () => {
    const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const other = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const clients = await Promise.all([
      ...Array.from({ length: 3 }, () => Bun.connect({ hostname: "127.0.0.1", port: server.port, socket: { data() {} } })),
      Bun.connect({ hostname: "127.0.0.1", port: other.port, socket: { data() {} } }),
    ]);
    const tables = socketTables();
    try {
      expect(tables).toBeDefined(); // Linux
      const count = tables!.read(server.port);
      expect(count.total).toBe(3);
      expect([...count.byAddress]).toEqual([[addressKey("127.0.0.1"), 3]]);
      expect(tables!.read(other.port).total).toBe(1);
    } finally {
      tables?.close();
      for (const c of clients) c.end();
      server.stop(true);
      other.stop(true);
    }
  });

  test("addresses as one key whatever their spelling", () => {
    expect(addressKey("127.0.0.1")).toBe("127.0.0.1");
    expect(addressKey("::ffff:10.1.2.3")).toBe("10.1.2.3");
    expect(addressKey("::1")).toBe("0000:0000:0000:0000:0000:0000:0000:0001");
    expect(addressKey("2001:DB8::8:800:200C:417A")).toBe("2001:0db8:0000:0000:0008:0800:200c:417a");
  });
});
