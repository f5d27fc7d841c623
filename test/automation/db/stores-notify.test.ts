// The notifications contract (wake-ups between processes on one database), run on both backends with the
// same assertions: a publish reaches the channel's subscribers and no one else, asynchronously, until they
// unsubscribe; payloads NOTIFY would refuse are refused. Then what only PostgreSQL has: two separately
// opened storages (two instances) on one database, NOTIFY in a transaction, the listening connection
// killed and back, and close() letting the process exit.
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { openStorage, type OpenedStorage } from "../../../src/automation/db/open";
import { pgNotify } from "../../../src/automation/db/pg/notifications";
import type { Channel, Notifications } from "../../../src/automation/runs/store";
import { freshPostgresDb } from "../../support/postgres";
import { bothIn, type Backend } from "./backends";

const opened: Backend[] = [];
const instances: OpenedStorage[] = [];
afterAll(async () => {
  for (const b of opened) await b.close();
  for (const i of instances) await i.close();
});

const onBoth = bothIn(opened);

/** Payloads received, and waits for them. */
function inbox() {
  const got: string[] = [];
  const wait = async (done: () => boolean, ms: number) => {
    const end = Date.now() + ms;
    while (!done() && Date.now() < end) await Bun.sleep(5);
    return got;
  };
  return {
    got,
    take: (payload: string) => void got.push(payload),
    /** Once `n` payloads arrived (or after `ms`). */
    until: (n: number, ms = 10_000) => wait(() => got.length >= n, ms),
    has: (payload: string, ms = 10_000) => wait(() => got.includes(payload), ms),
  };
}

/**
 * Publishes "barrier" on `channel` and waits until `box` (subscribed to it) has it: whatever was sent
 * before has arrived by then (PostgreSQL delivers in commit order), so an absence is an absence.
 */
async function settle(n: Notifications, channel: Channel, box: ReturnType<typeof inbox>) {
  await n.publish(channel, "barrier");
  expect(await box.has("barrier")).toContain("barrier");
}

describe("notifications contract on SQLite and PostgreSQL", () => {
  test("a publish reaches every subscriber of its channel, after publish returned control, the publisher's own storage included", async () => {
    const out = await onBoth(async (b) => {
      const n = b.storage.notifications;
      const one = inbox();
      const two = inbox();
      const fromPeer = inbox();
      await n.subscribe("runs.queued", one.take);
      await n.subscribe("runs.queued", two.take);
      await b.peer().notifications.subscribe("runs.queued", fromPeer.take);
      const sending = n.publish("runs.queued", "run_1");
      const duringPublish = [...one.got];
      await sending;
      await n.publish("runs.queued", "run_2");
      return { duringPublish, one: await one.until(2), two: await two.until(2), peer: await fromPeer.until(2) };
    });
    const expected = { duringPublish: [], one: ["run_1", "run_2"], two: ["run_1", "run_2"], peer: ["run_1", "run_2"] };
    expect(out).toEqual({ sqlite: expected, postgres: expected });
  });

  test("unsubscribing stops delivery to that subscriber only; the same function subscribed twice is two subscriptions", async () => {
    const out = await onBoth(async (b) => {
      const n = b.storage.notifications;
      const stays = inbox();
      const leaves = inbox();
      const twice = inbox();
      await n.subscribe("runs.finished", stays.take);
      const stop = await n.subscribe("runs.finished", leaves.take);
      const stopFirst = await n.subscribe("runs.finished", twice.take);
      await n.subscribe("runs.finished", twice.take);
      await n.publish("runs.finished", "run_1");
      await stays.until(1);
      await twice.until(2);
      stop();
      stopFirst();
      stop(); // a second call changes nothing
      await n.publish("runs.finished", "run_2");
      await settle(n, "runs.finished", stays);
      return { stays: stays.got, leaves: leaves.got, twice: twice.got };
    });
    const expected = { stays: ["run_1", "run_2", "barrier"], leaves: ["run_1"], twice: ["run_1", "run_1", "run_2", "barrier"] };
    expect(out).toEqual({ sqlite: expected, postgres: expected });
  });

  test("channels do not cross", async () => {
    const out = await onBoth(async (b) => {
      const n = b.storage.notifications;
      const boxes = { "runs.queued": inbox(), "runs.finished": inbox(), "runs.cancel": inbox() };
      for (const [channel, box] of Object.entries(boxes)) await n.subscribe(channel as Channel, box.take);
      await n.publish("runs.cancel", "run_c");
      await n.publish("runs.queued", "run_q");
      await n.publish("runs.finished", "run_f");
      await n.publish("runs.cancel", "run_c2");
      for (const box of Object.values(boxes)) await box.until(1);
      await boxes["runs.cancel"].until(2);
      // Anything crossing would have arrived by the time a later publish on each channel did.
      for (const [channel, box] of Object.entries(boxes)) await settle(n, channel as Channel, box);
      return Object.fromEntries(Object.entries(boxes).map(([c, box]) => [c, box.got.filter((p) => p.startsWith("run_"))]));
    });
    const expected = { "runs.queued": ["run_q"], "runs.finished": ["run_f"], "runs.cancel": ["run_c", "run_c2"] };
    expect(out).toEqual({ sqlite: expected, postgres: expected });
  });

  test("a payload of 8000 bytes or more (NOTIFY's limit, counted in UTF-8 bytes) is refused with a clear error; 7999 bytes arrive whole", async () => {
    const out = await onBoth(async (b) => {
      const n = b.storage.notifications;
      const box = inbox();
      await n.subscribe("runs.queued", box.take);
      const refused = async (payload: string) => n.publish("runs.queued", payload).then(() => "sent", (e: Error) => `${e.name}: ${e.message}`);
      const ascii = await refused("x".repeat(8000));
      const wide = await refused("é".repeat(4000)); // 4000 characters, 8000 bytes
      const unknown = await n.publish("runs.nope" as Channel, "run_1").then(() => "sent", (e: Error) => e.message);
      await n.publish("runs.queued", "y".repeat(7999));
      return { ascii, wide, unknown, got: (await box.until(1)).map((p) => p.length) };
    });
    const expected = {
      ascii: "RangeError: notification payload on runs.queued is 8000 bytes: at most 7999 (PostgreSQL's NOTIFY limit)",
      wide: "RangeError: notification payload on runs.queued is 8000 bytes: at most 7999 (PostgreSQL's NOTIFY limit)",
      unknown: 'unknown notification channel "runs.nope" (one of runs.queued, runs.finished, runs.cancel, keys.revoked, runs.assigned, sessions.changed)',
      got: [7999],
    };
    expect(out).toEqual({ sqlite: expected, postgres: expected });
  });

  test("close() ends this storage's subscriptions, not those of another storage on the database; a closed one refuses", async () => {
    const out = await onBoth(async (b) => {
      const peer = b.peer().notifications;
      const mine = inbox();
      const theirs = inbox();
      await b.storage.notifications.subscribe("runs.cancel", mine.take);
      await peer.subscribe("runs.cancel", theirs.take);
      await b.storage.notifications.close();
      await peer.publish("runs.cancel", "run_1");
      await settle(peer, "runs.cancel", theirs);
      const refused = await b.storage.notifications.subscribe("runs.cancel", () => {}).then(() => "subscribed", (e: Error) => e.message);
      return { mine: mine.got, theirs: theirs.got, refused };
    });
    const expected = { mine: [], theirs: ["run_1", "barrier"], refused: "notifications are closed" };
    expect(out).toEqual({ sqlite: expected, postgres: expected });
  });

  test("SQLite: the connection is the process's own and never drops, so onReconnect never runs", async () => {
    const { sqlite } = await onBoth(async (b) => {
      let calls = 0;
      b.storage.notifications.onReconnect(() => calls++);
      const box = inbox();
      await b.storage.notifications.subscribe("runs.queued", box.take);
      await settle(b.storage.notifications, "runs.queued", box);
      return calls;
    });
    expect(sqlite).toBe(0);
  });
});

describe("notifications on PostgreSQL between instances", () => {
  /** Two storages opened on one database as two automation-server processes would (each its own pool). */
  async function twoInstances(): Promise<[OpenedStorage, OpenedStorage, string]> {
    const url = await freshPostgresDb();
    const a = await openStorage({ dataDir: ":memory:", db: url, dbPool: 4, dbIdleTimeout: 1 });
    const b = await openStorage({ dataDir: ":memory:", db: url, dbPool: 4, dbIdleTimeout: 1 });
    instances.push(a, b);
    return [a, b, url];
  }

  /** Backends of this database holding a LISTEN (their last statement was one), other than the asking one. */
  const listeners = async (pg: SQL) =>
    Number((await pg`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`)[0].n);

  test("a publish on one instance reaches the subscribers on the other; each instance listens on one connection for all channels", async () => {
    const [a, b] = await twoInstances();
    const onB = { "runs.queued": inbox(), "runs.finished": inbox(), "runs.cancel": inbox() };
    for (const [channel, box] of Object.entries(onB)) await b.storage.notifications.subscribe(channel as Channel, box.take);
    const onA = inbox();
    await a.storage.notifications.subscribe("runs.finished", onA.take);
    await a.storage.notifications.publish("runs.queued", "run_1");
    await a.storage.notifications.publish("runs.finished", "run_1");
    await b.storage.notifications.publish("runs.cancel", "run_2");
    expect(await onB["runs.queued"].until(1)).toEqual(["run_1"]);
    expect(await onB["runs.finished"].until(1)).toEqual(["run_1"]);
    expect(await onB["runs.cancel"].until(1)).toEqual(["run_2"]);
    expect(await onA.until(1)).toEqual(["run_1"]);
    expect(await listeners(a.pg!)).toBe(2); // one per instance, not one per channel
  });

  test("a NOTIFY in a transaction arrives on commit, and not at all on rollback", async () => {
    const [a, b] = await twoInstances();
    const box = inbox();
    await b.storage.notifications.subscribe("runs.queued", box.take);
    await a.pg!.begin(async (tx) => {
      await pgNotify(tx, "runs.queued", "run_committed");
      await Bun.sleep(100);
      // Not before the commit.
      expect(box.got).toEqual([]);
    });
    const rolledBack = a.pg!.begin(async (tx) => {
      await pgNotify(tx, "runs.queued", "run_rolled_back");
      throw new Error("rolled back");
    });
    await expect(rolledBack).rejects.toThrow("rolled back");
    await expect(pgNotify(a.pg!, "runs.queued", "z".repeat(8000))).rejects.toThrow(RangeError);
    await settle(a.storage.notifications, "runs.queued", box);
    expect(box.got).toEqual(["run_committed", "barrier"]);
  });

  test("the listening connection killed: it comes back, LISTENs every channel again, onReconnect runs once, and later publishes arrive", async () => {
    const [a, b] = await twoInstances();
    const queued = inbox();
    const cancel = inbox();
    await b.storage.notifications.subscribe("runs.queued", queued.take);
    await b.storage.notifications.subscribe("runs.cancel", cancel.take);
    let reconnects = 0;
    let removedCalls = 0;
    b.storage.notifications.onReconnect(() => reconnects++);
    b.storage.notifications.onReconnect(() => removedCalls++)();
    await a.storage.notifications.publish("runs.queued", "run_before");
    await queued.until(1);

    const killed = await a.pg!`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`;
    expect(killed.map((r: { ok: boolean }) => r.ok)).toEqual([true]);
    const end = Date.now() + 15_000;
    while (reconnects === 0 && Date.now() < end) await Bun.sleep(10);
    expect(reconnects).toBe(1);

    await a.storage.notifications.publish("runs.queued", "run_after");
    await a.storage.notifications.publish("runs.cancel", "run_after");
    expect(await queued.until(2)).toEqual(["run_before", "run_after"]);
    expect(await cancel.until(1)).toEqual(["run_after"]);
    // Both channels were LISTENed again; the callbacks ran once for the one reconnect, past the settle bound too.
    await Bun.sleep(1200);
    expect({ reconnects, removedCalls }).toEqual({ reconnects: 1, removedCalls: 0 });
  });

  test("close() ends the listening connection: a process that subscribed exits once it closed its notifications", async () => {
    const [a, , url] = await twoInstances();
    const script = `
      import { openStorage } from ${JSON.stringify(new URL("../../../src/automation/db/open.ts", import.meta.url).pathname)};
      const opened = await openStorage({ dataDir: ":memory:", db: process.env.DB_URL, dbPool: 2, dbIdleTimeout: 1 });
      const n = opened.storage.notifications;
      const got = new Promise((resolve) => n.subscribe("runs.finished", resolve));
      await n.subscribe("runs.queued", () => {});
      await n.publish("runs.finished", "run_1");
      console.log("received", await got);
      await n.close();
      console.log("closed");
    `;
    // Only the notifications are closed, never the pool: its idle connections end after a second on their own.
    const child = Bun.spawn(["bun", "-e", script], { env: { ...process.env, DB_URL: url }, stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const code = await child.exited;
    clearTimeout(timer);
    expect({ code, out: await new Response(child.stdout).text(), err: await new Response(child.stderr).text() }).toEqual({ code: 0, out: "received run_1\nclosed\n", err: "" });
    expect(await listeners(a.pg!)).toBe(0);
  });
});
