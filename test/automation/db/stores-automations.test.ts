// The automations store's contract on both backends (same rows, same order, same pages) and its races:
// a slug created once, a tag added once, activations that leave one current version whose name the
// automation shows, and racing promotes of one version that change the automation exactly once.
// SQLite: an in-memory database; PostgreSQL: a fresh database on the test server.
import { afterAll, describe, expect, test } from "bun:test";
import type { AutomationRow, VersionRow } from "../../../src/automation/db/tables/foundation";
import { PgAutomationStore } from "../../../src/automation/db/pg/automations";
import { bothIn, type Backend } from "./backends";

const opened: Backend[] = [];
afterAll(async () => {
  for (const b of opened) await b.close();
});

/** Runs `body` on both backends (a tenant `t1` already there) and returns what each produced. */
const onBoth = bothIn(opened, async (b) => {
  await b.storage.tenancy.createTenant(
    { id: "t1", slug: "acme", name: "Acme", createdAt: at(0) },
    { id: "k1", tenantId: "t1", name: null, hash: "h", hint: "xxxx", scopes: '["*"]', createdAt: at(0), lastUsedAt: null, revokedAt: null },
  );
});

const T0 = Date.parse("2026-11-25T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

const automation = (id: string, slug: string, o: Partial<AutomationRow> = {}): AutomationRow => ({
  id,
  tenantId: "t1",
  type: "workflow",
  slug,
  name: slug,
  description: null,
  status: "active",
  currentVersionId: `${id}_v1`,
  createdAt: at(1),
  updatedAt: at(1),
  ...o,
});

const version = (automationId: string, id: string, tag: string | null, o: Partial<VersionRow> = {}): VersionRow => ({
  id,
  tenantId: "t1",
  automationId,
  version: tag,
  yaml: `name: x\nversion: ${tag}\n`,
  sourceRef: null,
  message: null,
  name: `name ${tag}`,
  description: `described ${tag}`,
  triggers: '{"api":true,"email":false,"manual":true,"cron":false}',
  inputSchema: '{"type": "object",  "properties": {"b": {}, "a": {}}}',
  outputSchema: null,
  createdAt: at(10),
  ...o,
});

/** Triggers are JSON: jsonb keeps its own key order, the services parse them. */
const parsedV = (v: VersionRow | undefined) => v && { ...v, triggers: JSON.parse(v.triggers) };

describe("automations store on SQLite and PostgreSQL", () => {
  test("lookups by id, slug and typed target; pages newest first with filters; versions with the untagged head; status and refusals", async () => {
    const out = await onBoth(async (b) => {
      const s = b.storage.automations;
      // Same creation time for wf_b and wf_c: the id breaks the tie, on both backends.
      expect(await s.create(automation("wf_a", "alpha", { description: "100% sure" }), version("wf_a", "wf_a_v1", "1.0.0"))).toBe("ok");
      expect(await s.create(automation("wf_b", "beta", { createdAt: at(2), name: "Beta_1" }), version("wf_b", "wf_b_v1", "1.0.0"))).toBe("ok");
      expect(await s.create(automation("wf_c", "gamma", { createdAt: at(2) }), version("wf_c", "wf_c_v1", null))).toBe("ok");
      expect(await s.create(automation("agt_a", "alpha", { type: "agent", currentVersionId: null, createdAt: at(3) }), version("agt_a", "agt_a_v1", "0.1.0"))).toBe("ok");
      const page = async (f: Parameters<typeof s.list>[1]) => {
        const r = await s.list("t1", f);
        return { total: r.total, rows: r.rows.map((x) => ({ automation: x.automation, current: parsedV(x.current) })) };
      };
      const pages = {
        all: await page({ limit: 10, offset: 0 }),
        first: await page({ limit: 2, offset: 0 }),
        second: await page({ limit: 2, offset: 2 }),
        agents: await page({ type: "agent", limit: 10, offset: 0 }),
        percent: await page({ search: "0%", limit: 10, offset: 0 }),
        underscore: await page({ search: "a_1", limit: 10, offset: 0 }),
        wildcardsLiteral: await page({ search: "%", limit: 10, offset: 0 }),
        otherTenant: await s.list("t2", { limit: 10, offset: 0 }),
      };
      const find = {
        id: (await s.find("t1", "wf_a"))?.id,
        slug: (await s.find("t1", "workflows.alpha"))?.id,
        agentSlug: (await s.find("t1", "agents.alpha"))?.id,
        typedId: (await s.find("t1", "workflows.wf_b"))?.id,
        wrongType: await s.find("t1", "agents.wf_b"),
        otherTenant: await s.find("t2", "wf_a"),
        bySlug: (await s.bySlug("t1", "agent", "alpha"))?.id,
      };
      // With the current version read along: the slug shared by a workflow and an agent picks by type.
      const withCurrent = async (tenant: string, ref: string) => {
        const r = await s.findWithCurrent(tenant, ref);
        return r && { id: r.automation.id, current: r.current?.id ?? null };
      };
      const findWithCurrent = {
        id: await withCurrent("t1", "wf_a"),
        slug: await withCurrent("t1", "workflows.alpha"),
        agentNoCurrent: await withCurrent("t1", "agents.alpha"),
        typedId: await withCurrent("t1", "workflows.wf_b"),
        wrongType: await withCurrent("t1", "agents.wf_b"),
        otherTenant: await withCurrent("t2", "wf_a"),
      };
      expect(findWithCurrent).toEqual({
        id: { id: "wf_a", current: "wf_a_v1" },
        slug: { id: "wf_a", current: "wf_a_v1" },
        agentNoCurrent: { id: "agt_a", current: null },
        typedId: { id: "wf_b", current: "wf_b_v1" },
        wrongType: undefined,
        otherTenant: undefined,
      });
      // Versions of wf_a: 1.1.0 dark, 1.2.0 current, then an untagged restore as the head.
      const dark = await s.addVersion("t1", version("wf_a", "wf_a_v2", "1.1.0", { createdAt: at(20) }), false);
      const live = await s.addVersion("t1", version("wf_a", "wf_a_v3", "1.2.0", { createdAt: at(30) }), true);
      const restored = await s.addVersion("t1", version("wf_a", "wf_a_v4", null, { createdAt: at(40), sourceRef: "wf_a_v1", name: "restored" }), true);
      const refusals = {
        duplicate: await s.addVersion("t1", version("wf_a", "wf_a_dup", "1.1.0"), true),
        noCurrent: await s.addVersion("t1", version("agt_a", "agt_a_v2", "0.2.0"), false),
        unknown: await s.addVersion("t1", version("wf_nope", "x", "1.0.0"), true),
        promoteUntagged: await s.promote("t1", "wf_a", "wf_a_v4", at(50)),
        promoteUnknown: await s.promote("t1", "wf_a", "wf_b_v1", at(50)),
      };
      const a = (await s.byId("t1", "wf_a"))!;
      const versions = async (p: { limit: number; offset: number }) => {
        const r = await s.versions("wf_a", "wf_a_v4", p);
        return { total: r.total, ids: r.rows.map((v) => v.id) };
      };
      const promoted = await s.promote("t1", "wf_a", "wf_a_v2", at(60));
      const again = await s.promote("t1", "wf_a", "wf_a_v2", at(61));
      const disabled = await s.setStatus("t1", "wf_b", "disabled", at(70));
      const disabledAgain = await s.setStatus("t1", "wf_b", "disabled", at(71));
      return {
        pages,
        find,
        dark: "automation" in dark ? dark.automation.currentVersionId : dark,
        live: "automation" in live ? live.automation : live,
        restored: "automation" in restored ? restored.automation.currentVersionId : restored,
        refusals,
        afterRestore: { name: a.name, current: parsedV(await s.current(a)) },
        versionsAll: await versions({ limit: 10, offset: 0 }),
        versionsPage: await versions({ limit: 2, offset: 1 }),
        versionsWithoutHead: (await s.versions("wf_a", null, { limit: 10, offset: 0 })).rows.map((v) => v.id),
        version: parsedV(await s.version("wf_a", "wf_a_v2")),
        versionOfOther: await s.version("wf_b", "wf_a_v2"),
        promoted: "changed" in promoted ? { changed: promoted.changed, updatedAt: promoted.automation.updatedAt, current: promoted.automation.currentVersionId } : promoted,
        again: "changed" in again ? { changed: again.changed, updatedAt: again.automation.updatedAt } : again,
        disabled: [disabled?.status, disabled?.updatedAt, disabledAgain?.updatedAt],
        statusUnknown: await s.setStatus("t1", "wf_nope", "disabled", at(72)),
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    const s = out.sqlite;
    expect(s.pages.all.rows.map((r) => r.automation.id)).toEqual(["agt_a", "wf_c", "wf_b", "wf_a"]);
    expect(s.pages.all.total).toBe(4);
    expect([...s.pages.first.rows, ...s.pages.second.rows].map((r) => r.automation.id)).toEqual(["agt_a", "wf_c", "wf_b", "wf_a"]);
    expect(s.pages.first.total).toBe(4);
    expect(s.pages.all.rows[0].current).toBeUndefined();
    expect(s.pages.all.rows[3].current?.inputSchema).toBe('{"type": "object",  "properties": {"b": {}, "a": {}}}');
    expect(s.pages.agents.rows.map((r) => r.automation.id)).toEqual(["agt_a"]);
    expect(s.pages.percent.rows.map((r) => r.automation.id)).toEqual(["wf_a"]);
    expect(s.pages.underscore.rows.map((r) => r.automation.id)).toEqual(["wf_b"]);
    expect(s.pages.wildcardsLiteral.rows.map((r) => r.automation.id)).toEqual(["wf_a"]);
    expect(s.pages.otherTenant).toEqual({ rows: [], total: 0 });
    expect(s.find).toEqual({ id: "wf_a", slug: "wf_a", agentSlug: "agt_a", typedId: "wf_b", wrongType: undefined, otherTenant: undefined, bySlug: "agt_a" });
    expect(s.dark).toBe("wf_a_v1");
    expect(s.live).toMatchObject({ currentVersionId: "wf_a_v3", name: "name 1.2.0", description: "described 1.2.0", updatedAt: at(30) });
    expect(s.restored).toBe("wf_a_v4");
    expect(s.refusals).toEqual({
      duplicate: { refused: "duplicate_version" },
      noCurrent: { refused: "no_current_version" },
      unknown: { refused: "not_found" },
      promoteUntagged: { refused: "untagged" },
      promoteUnknown: { refused: "not_found" },
    });
    expect(s.afterRestore.name).toBe("restored");
    expect(s.versionsAll).toEqual({ total: 4, ids: ["wf_a_v4", "wf_a_v3", "wf_a_v2", "wf_a_v1"] });
    expect(s.versionsPage).toEqual({ total: 4, ids: ["wf_a_v3", "wf_a_v2"] });
    expect(s.versionsWithoutHead).toEqual(["wf_a_v3", "wf_a_v2", "wf_a_v1"]);
    expect(s.versionOfOther).toBeUndefined();
    expect(s.promoted).toEqual({ changed: true, updatedAt: at(60), current: "wf_a_v2" });
    expect(s.again).toEqual({ changed: false, updatedAt: at(60) });
    expect(s.disabled).toEqual(["disabled", at(70), at(70)]);
    expect(s.statusUnknown).toBeUndefined();
  }, 60_000);

  test("8 creates of one slug race: one automation, seven slug_taken, no version of a loser", async () => {
    const out = await onBoth(async (b) => {
      const s = b.storage.automations;
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => s.create(automation(`wf_${i}`, "same"), version(`wf_${i}`, `wf_${i}_v1`, "1.0.0"))));
      const winner = results.indexOf("ok");
      const versions = await Promise.all(Array.from({ length: 8 }, (_, i) => s.version(`wf_${i}`, `wf_${i}_v1`)));
      return {
        ok: results.filter((r) => r === "ok").length,
        taken: results.filter((r) => r === "slug_taken").length,
        winner: (await s.bySlug("t1", "workflow", "same"))?.id === `wf_${winner}`,
        versions: versions.filter(Boolean).length,
        total: (await s.list("t1", { limit: 10, offset: 0 })).total,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toEqual({ ok: 1, taken: 7, winner: true, versions: 1, total: 1 });
  }, 60_000);

  test("8 creates of one tag race: one row, seven duplicate_version; 8 distinct tags race: every tag once, one current whose name the automation shows", async () => {
    const out = await onBoth(async (b) => {
      const s = b.storage.automations;
      await s.create(automation("wf_a", "alpha"), version("wf_a", "wf_a_v1", "1.0.0"));
      const same = await Promise.all(Array.from({ length: 8 }, (_, i) => s.addVersion("t1", version("wf_a", `wf_a_same_${i}`, "2.0.0", { createdAt: at(20 + i) }), i % 2 === 0)));
      const distinct = await Promise.all(Array.from({ length: 8 }, (_, i) => s.addVersion("t1", version("wf_a", `wf_a_d${i}`, `3.${i}.0`, { createdAt: at(40 + i) }), true)));
      const a = (await s.byId("t1", "wf_a"))!;
      const current = (await s.current(a))!;
      const rows = (await s.versions("wf_a", null, { limit: 100, offset: 0 })).rows;
      return {
        sameOk: same.filter((r) => "automation" in r).length,
        sameRefused: same.filter((r) => "refused" in r && r.refused === "duplicate_version").length,
        distinctOk: distinct.filter((r) => "automation" in r).length,
        tags: rows.map((v) => v.version).sort(),
        oneCurrent: rows.filter((v) => v.id === a.currentVersionId).length,
        currentIsARacer: /^3\.[0-7]\.0$/.test(current.version ?? ""),
        nameFollows: a.name === current.name && a.description === current.description,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toEqual({
      sameOk: 1,
      sameRefused: 7,
      distinctOk: 8,
      tags: ["1.0.0", "2.0.0", ...Array.from({ length: 8 }, (_, i) => `3.${i}.0`)],
      oneCurrent: 1,
      currentIsARacer: true,
      nameFollows: true,
    });
  }, 60_000);

  test("8 promotes of one version race: exactly one changes the automation (updatedAt moves once); mixed activations leave one current", async () => {
    const out = await onBoth(async (b) => {
      const s = b.storage.automations;
      await s.create(automation("wf_a", "alpha"), version("wf_a", "wf_a_v1", "1.0.0"));
      for (let i = 2; i <= 5; i++) await s.addVersion("t1", version("wf_a", `wf_a_v${i}`, `1.${i}.0`, { createdAt: at(10 + i) }), false);
      const promotes = await Promise.all(Array.from({ length: 8 }, (_, i) => s.promote("t1", "wf_a", "wf_a_v2", at(100 + i))));
      const changed = promotes.filter((r) => "changed" in r && r.changed) as { automation: AutomationRow }[];
      const afterPromotes = (await s.byId("t1", "wf_a"))!;
      // Promotes of v3..v5 and new activated versions at once: one current at the end, its name shown.
      await Promise.all([
        ...[3, 4, 5].map((i) => s.promote("t1", "wf_a", `wf_a_v${i}`, at(200 + i))),
        ...[6, 7, 8].map((i) => s.addVersion("t1", version("wf_a", `wf_a_v${i}`, `1.${i}.0`, { createdAt: at(200 + i) }), true)),
      ]);
      const a = (await s.byId("t1", "wf_a"))!;
      const current = (await s.current(a))!;
      const rows = (await s.versions("wf_a", null, { limit: 100, offset: 0 })).rows;
      return {
        changed: changed.length,
        updatedOnce: afterPromotes.updatedAt === changed[0]?.automation.updatedAt,
        current: afterPromotes.currentVersionId,
        oneCurrent: rows.filter((v) => v.id === a.currentVersionId).length,
        lastIsARacer: ["wf_a_v3", "wf_a_v4", "wf_a_v5", "wf_a_v6", "wf_a_v7", "wf_a_v8"].includes(current.id),
        nameFollows: a.name === current.name && a.description === current.description,
        versions: rows.length,
      };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toEqual({ changed: 1, updatedOnce: true, current: "wf_a_v2", oneCurrent: 1, lastIsARacer: true, nameFollows: true, versions: 8 });
  }, 60_000);

  test("lookups asked in one turn answer each as alone, each its own copy; one asked after a promote sees it; on PostgreSQL those naming one automation share a query", async () => {
    const out = await onBoth(async (b) => {
      const s = b.storage.automations;
      await s.create(automation("wf_a", "alpha"), version("wf_a", "wf_a_v1", "1.0.0"));
      await s.create(automation("wf_b", "beta"), version("wf_b", "wf_b_v1", "1.0.0"));
      await s.addVersion("t1", version("wf_a", "wf_a_v2", "2.0.0", { createdAt: at(20), name: "Alpha two" }), false);
      const refs = ["workflows.alpha", "wf_a", "workflows.beta", "agents.alpha", "nope", "workflows.wf_a"];
      const asked = Array.from({ length: 30 }, (_, i) => refs[i % refs.length]);
      const found = await Promise.all(asked.map((r) => s.findWithCurrent("t1", r)));
      const alone = await Promise.all(refs.map((r) => s.findWithCurrent("t1", r)));
      // Each caller may change what it got without touching another's answer.
      const copies = new Set(found.filter(Boolean).map((f) => f!.automation)).size === found.filter(Boolean).length;
      found[0]!.automation.name = "changed by one caller";
      const promoted = await s.promote("t1", "wf_a", "wf_a_v2", at(30));
      const after = await s.findWithCurrent("t1", "workflows.alpha");
      // PostgreSQL: the store over a pool that counts its queries.
      let queries: number | undefined;
      if (b.pg) {
        const pg = b.pg;
        let n = 0;
        const counting = new Proxy(pg, { get: (t, k) => (k === "unsafe" ? (q: string, a?: unknown[]) => (n++, t.unsafe(q, a as never[])) : Reflect.get(t, k)) });
        const counted = new PgAutomationStore(counting);
        await Promise.all(Array.from({ length: 20 }, () => counted.findWithCurrent("t1", "workflows.alpha")));
        queries = n;
      }
      return {
        answers: found.map((f) => [f?.automation.id ?? null, f?.current?.id ?? null]),
        sameAsAlone: found.slice(1).every((f, i) => JSON.stringify(f) === JSON.stringify(alone[(i + 1) % refs.length])),
        copies,
        otherUntouched: found[6]!.automation.name,
        promoted: "changed" in promoted && promoted.changed,
        after: [after?.current?.id, after?.automation.name],
        queries,
      };
    });
    expect({ ...out.postgres, queries: undefined }).toEqual({ ...out.sqlite, queries: undefined });
    expect(out.sqlite.answers.slice(0, 6)).toEqual([["wf_a", "wf_a_v1"], ["wf_a", "wf_a_v1"], ["wf_b", "wf_b_v1"], [null, null], [null, null], ["wf_a", "wf_a_v1"]]);
    expect(out.sqlite).toMatchObject({ sameAsAlone: true, copies: true, otherUntouched: "alpha", promoted: true, after: ["wf_a_v2", "Alpha two"] });
    expect(out.postgres.queries).toBe(1);
  }, 60_000);

  test("stats: the metrics gauges' counts (queue depth, running runs, open human-review tasks)", async () => {
    const out = await onBoth(async (b) => {
      const before = await b.storage.stats.counts();
      const statuses = ["pending", "pending", "pending", "running", "running", "completed", "waiting"];
      for (const [i, status] of statuses.entries()) {
        await b.exec("INSERT INTO runs (id, tenant_id, type, automation_id, definition, status, input, sample_rank, created_at) VALUES (?, 't1', 'workflow', 'a1', 'x', ?, '{}', 0.5, ?)", [`run_${i}`, status, at(i)]);
      }
      for (const [i, status] of ["pending", "pending", "approved"].entries()) {
        await b.exec(
          "INSERT INTO human_review_tasks (id, tenant_id, run_id, step_path, automation_id, source_label, status, required_count, data, files, created_at, updated_at) VALUES (?, 't1', ?, 'review', 'a1', 'x', ?, 0, '{}', '[]', ?, ?)",
          [`hrt_${i}`, `run_${6 - i}`, status, at(i), at(i)],
        );
      }
      return { before, after: await b.storage.stats.counts() };
    });
    expect(out.postgres).toEqual(out.sqlite);
    expect(out.sqlite).toEqual({ before: { pendingRuns: 0, runningRuns: 0, openTasks: 0 }, after: { pendingRuns: 3, runningRuns: 2, openTasks: 2 } });
  }, 60_000);
});
