// The console's server side in process: `/` and its assets with a CSP that forbids inline script,
// `--no-console`, API paths untouched; and the two API additions the console uses (a version's YAML,
// manual runs from its run form).
import { describe, expect, test } from "bun:test";
import { harness, json } from "../app/harness";
import { wf } from "../automations/fixtures";

describe("console", () => {
  test("/ is the console page with a CSP without inline script; its assets are served, immutable", async () => {
    const h = await harness();
    const page = await h.req("GET", "/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const assets = [...html.matchAll(/(?:src|href)="\.?(\/chunk-[\w-]+\.(?:js|css))"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const path of assets) {
      const r = await h.req("GET", path);
      expect(r.status).toBe(200);
      expect(r.headers.get("cache-control")).toContain("immutable");
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
  }, 60_000);

  test("API paths and unknown paths answer as before; POST / is not the console", async () => {
    const h = await harness();
    expect((await h.req("GET", "/health")).status).toBe(200);
    const unknown = await h.req("GET", "/nope");
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).issues[0].code).toBe("not_found");
    expect((await h.req("GET", "/missing-chunk.js")).status).toBe(404);
    expect((await h.req("POST", "/")).headers.get("content-security-policy")).toBeNull();
  });

  test("--no-console: / is a 404 like any unknown path", async () => {
    const h = await harness({ console: false });
    const r = await h.req("GET", "/");
    expect(r.status).toBe(404);
    expect(r.headers.get("content-security-policy")).toBeNull();
  });

  test("a version's YAML: GET /v1/automations/{id}/versions/{versionId}; other tenants get 404", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const other = await h.tenant("other");
    const yaml = wf("inv", { version: "1.0.0", description: "one" });
    const a = await json(await h.req("POST", "/v1/automations", { key: t.key, body: { yaml } }));
    const [v] = (await json(await h.req("GET", `/v1/automations/${a.id}/versions`, { key: t.key }))).data;
    const got = await json(await h.req("GET", `/v1/automations/${a.id}/versions/${v.id}`, { key: t.key }));
    expect(got).toMatchObject({ id: v.id, version: "1.0.0", isCurrent: true, yaml });
    expect((await h.req("GET", `/v1/automations/${a.id}/versions/wfh_nope`, { key: t.key })).status).toBe(404);
    expect((await h.req("GET", `/v1/automations/${a.id}/versions/${v.id}`, { key: other.key })).status).toBe(404);
  });

  test("x-eigenpal-trigger: manual starts a manual run; a workflow without the manual trigger refuses it", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: "name: m\ntriggerMethods: [{type: api}, {type: manual}]\nsteps:\n  - {name: s, type: transform.set, with: {fields: {a: 1}}}\n" } });
    await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: "name: api-only\ntriggerMethods: [{type: api}]\nsteps:\n  - {name: s, type: transform.set, with: {fields: {a: 1}}}\n" } });
    const manual = { "x-eigenpal-trigger": "manual" };
    const run = await json(await h.req("POST", "/v1/runs", { key: t.key, body: { target: "workflows.m", input: {} }, headers: manual }));
    const got = await json(await h.req("GET", `/v1/runs/${run.id}`, { key: t.key }));
    expect(got.trigger.type).toBe("manual");
    const refused = await h.req("POST", "/v1/runs", { key: t.key, body: { target: "workflows.api-only", input: {} }, headers: manual });
    expect(refused.status).toBe(403);
    expect((await json(refused)).issues[0].code).toBe("manual_trigger_disabled");
  });
});
