import { describe, expect, test } from "bun:test";
import { harness, json, type Harness } from "../app/harness";
import { wf } from "./fixtures";

async function create(h: Harness, key: string, yaml: string) {
  const r = await h.req("POST", "/v1/automations", { key, body: { yaml } });
  return { status: r.status, body: await json(r) };
}

describe("POST /v1/automations", () => {
  test("creates a workflow from YAML: 201 with the detail shape", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const { status, body } = await create(h, t.key, wf("invoice-summary", { version: "1.0.0", description: "Totals an invoice" }));
    expect(status).toBe(201);
    expect(body.id).toMatch(/^wf_/);
    expect(body).toMatchObject({
      type: "workflow",
      slug: "invoice-summary",
      name: "invoice-summary",
      description: "Totals an invoice",
      status: "active",
      version: "1.0.0",
      triggers: { api: true, email: false, manual: true, cron: false },
      createdAt: "2026-11-22T09:00:00.000Z",
      updatedAt: "2026-11-22T09:00:00.000Z",
    });
    expect(body.inputSchema.type).toBe("object");
    expect(Object.keys(body.inputSchema.properties)).toEqual(["invoice", "note"]);
    expect(body.inputSchema.required).toEqual(["invoice"]);
    expect(Object.keys(body.outputSchema.properties)).toEqual(["total"]);
  });

  test("a YAML without version gives an untagged current version (version null)", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const { status, body } = await create(h, t.key, wf("plain"));
    expect(status).toBe(201);
    expect(body.version).toBeNull();
    const list = await json(await h.req("GET", `/v1/automations/${body.id}/versions`, { key: t.key }));
    expect(list.total).toBe(1);
    expect(list.data[0]).toMatchObject({ version: null, isCurrent: true, sourceRef: null });
  });

  test("the same name twice → 409", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    expect((await create(h, t.key, wf("dup"))).status).toBe(201);
    const again = await create(h, t.key, wf("dup", { version: "2.0.0" }));
    expect(again.status).toBe(409);
    expect(again.body.issues[0]).toMatchObject({ code: "already_exists", field: "yaml.name", severity: "error" });
  });

  test("invalid YAML → 400 with issues naming line and field", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const syntax = await create(h, t.key, "name: x\nsteps: [\n");
    expect(syntax.status).toBe(400);
    expect(syntax.body.issues[0].message).toContain("line 3");
    expect(syntax.body.issues[0].code).toBe("invalid_yaml");

    const kind = await create(h, t.key, "name: x\nsteps:\n  - name: a\n    type: nope.kind\n");
    expect(kind.status).toBe(400);
    expect(kind.body.issues[0]).toMatchObject({ field: "yaml.steps.0.type", code: "unknown_step_type", severity: "error" });
    expect(kind.body.issues[0].message).toContain("line 4");

    const tag = await create(h, t.key, wf("badtag", { version: "v1" }));
    expect(tag.status).toBe(400);
    expect(tag.body.issues[0].field).toBe("yaml.version");
  });

  test("2 MiB of YAML → 413 envelope; a 1 MiB+ yaml field → 413 naming yaml", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const big = wf("big") + `# ${"x".repeat(2 * 1024 * 1024)}\n`;
    const r = await create(h, t.key, big);
    expect(r.status).toBe(413);
    expect(r.body.issues[0].severity).toBe("error");
    const justOver = wf("big") + `# ${"x".repeat(1024 * 1024)}\n`;
    const r2 = await create(h, t.key, justOver);
    expect(r2.status).toBe(413);
    expect(r2.body.issues[0]).toMatchObject({ field: "yaml", code: "yaml_too_large" });
    expect((await h.ctx.storage.automations.list(t.id, { limit: 1, offset: 0 })).total).toBe(0);
  });

  test("body shape errors: missing yaml, wrong type, unknown field → 400 with dotted fields", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    for (const [body, field] of [
      [{}, "yaml"],
      [{ yaml: 42 }, "yaml"],
      [{ yaml: wf("x"), extra: 1 }, "extra"],
    ] as const) {
      const r = await h.req("POST", "/v1/automations", { key: t.key, body });
      expect(r.status).toBe(400);
      const b = await json(r);
      expect(b.issues.map((i: { field: string }) => i.field)).toContain(field);
      expect(b.requestId).toBeString();
    }
  });

  test("malformed JSON → 400, wrong content type → 415, both as envelopes", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const bad = await h.req("POST", "/v1/automations", { key: t.key, body: '{"yaml": ', headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect((await json(bad)).issues[0].code).toBe("invalid_json");
    const text = await h.req("POST", "/v1/automations", { key: t.key, body: "yaml: x", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    expect((await json(text)).issues[0].code).toBe("unsupported_media_type");
    const form = new FormData();
    form.set("yaml", wf("x"));
    const multi = await h.req("POST", "/v1/automations", { key: t.key, body: form });
    expect(multi.status).toBe(415);
    const arr = await h.req("POST", "/v1/automations", { key: t.key, body: "[1,2]", headers: { "content-type": "application/json" } });
    expect(arr.status).toBe(400);
  });

  test("body shape errors name the field and say what is wrong: unknown, missing, array, null", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const send = async (body: string) => {
      const r = await h.req("POST", "/v1/automations", { key: t.key, body, headers: { "content-type": "application/json" } });
      expect(r.status).toBe(400);
      return (await json(r)).issues as { field: string; message: string; code: string }[];
    };
    expect(await send(JSON.stringify({ yaml: wf("x"), extra: 1 }))).toEqual([
      { field: "extra", message: 'unknown field "extra"', code: "unrecognized_keys", severity: "error" },
    ] as never);
    expect(await send("{}")).toEqual([{ field: "yaml", message: "yaml is required", code: "required", severity: "error" }] as never);
    expect(await send("[1,2]")).toEqual([{ field: "<root>", message: "expected a JSON object, got an array", code: "invalid_type", severity: "error" }] as never);
    expect(await send("null")).toEqual([{ field: "<root>", message: "expected a JSON object, got null", code: "invalid_type", severity: "error" }] as never);
    const version = await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: wf("x") } });
    expect(version.status).toBe(201);
    const r = await h.req("POST", "/v1/automations/workflows.x/versions", { key: t.key, body: { yaml: wf("x"), version: "1.0.1", activat: true } });
    expect((await json(r)).issues).toEqual([{ field: "activat", message: 'unknown field "activat"', code: "unrecognized_keys", severity: "error" }]);
  });

  test("a YAML with hundreds of errors → 400 with the first 100 issues and a hint counting the rest", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const steps = Array.from({ length: 300 }, (_, i) => `  - {name: s${i}, type: no.such.kind${i}}\n`).join("");
    const r = await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: `name: many\nsteps:\n${steps}` } });
    expect(r.status).toBe(400);
    const b = await json(r);
    expect(b.issues).toHaveLength(100);
    expect(b.issues[0].message).toContain("no.such.kind0");
    expect(b.hint).toBe("200 more issue(s) not shown; fix these first");
  });

  test("wrong content types on every JSON route → 415 naming the type received", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    await h.req("POST", "/v1/automations", { key: t.key, body: { yaml: wf("x") } });
    const v = await json(await h.req("GET", "/v1/automations/workflows.x/versions", { key: t.key }));
    const id = v.data[0].id as string;
    for (const path of ["/v1/automations", "/v1/automations/workflows.x/versions", `/v1/automations/workflows.x/versions/${id}/restore`, "/v1/files/uploads"]) {
      const r = await h.req("POST", path, { key: t.key, body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } });
      expect(r.status).toBe(415);
      const b = await json(r);
      expect(b.issues[0]).toEqual({
        field: "<root>",
        message: "expected Content-Type application/json, got application/x-www-form-urlencoded",
        code: "unsupported_media_type",
        severity: "error",
      });
    }
  });

  test("a large body of the wrong type → 415 (the type is refused before the size)", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const r = await h.req("POST", "/v1/automations", { key: t.key, body: "x".repeat(5 * 1024 * 1024), headers: { "content-type": "text/plain", "content-length": String(5 * 1024 * 1024) } });
    expect(r.status).toBe(415);
    expect((await json(r)).issues[0].message).toBe("expected Content-Type application/json, got text/plain");
  });

  test("an oversized JSON body without Content-Length (chunked) → 413", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const chunk = new TextEncoder().encode("x".repeat(1024 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ < 6) c.enqueue(chunk);
        else c.close();
      },
    });
    const r = await h.app.handle(
      new Request("http://localhost/v1/automations", {
        method: "POST",
        headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" },
        body: stream,
      }),
    );
    expect(r.status).toBe(413);
    expect((await json(r)).issues[0].code).toBe("payload_too_large");
  });
});

describe("GET /v1/automations and by id/alias", () => {
  async function seeded() {
    const h = await harness();
    const t = await h.tenant("acme");
    const ids: string[] = [];
    for (const [name, description] of [["alpha", "Totals invoices"], ["beta", "Sends mail"], ["gamma_50", "Takes 50% off"]]) {
      h.clock.advance(1000);
      ids.push((await create(h, t.key, wf(name, { description }))).body.id);
    }
    return { h, t, ids };
  }

  test("list envelope {data,total,limit,offset}, newest first, limit/offset paging", async () => {
    const { h, t, ids } = await seeded();
    const r = await json(await h.req("GET", "/v1/automations", { key: t.key }));
    expect(r.total).toBe(3);
    expect(r.limit).toBe(50);
    expect(r.offset).toBe(0);
    expect(r.data.map((a: { id: string }) => a.id)).toEqual([...ids].reverse());
    expect(Object.keys(r.data[0]).sort()).toEqual(["createdAt", "description", "id", "name", "slug", "status", "triggers", "type", "updatedAt", "version"]);
    const expanded = await json(await h.req("GET", "/v1/automations?expand=implementationAvailable", { key: t.key }));
    expect(expanded.data.every((a: { implementationAvailable: boolean }) => a.implementationAvailable === true)).toBe(true);
    const p2 = await json(await h.req("GET", "/v1/automations?limit=1&offset=1", { key: t.key }));
    expect(p2).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(p2.data.map((a: { id: string }) => a.id)).toEqual([ids[1]]);
  });

  test("search matches slug, name or description; type filters; LIKE wildcards are literal", async () => {
    const { h, t } = await seeded();
    const slugs = async (q: string) =>
      (await json(await h.req("GET", `/v1/automations?${q}`, { key: t.key }))).data.map((a: { slug: string }) => a.slug);
    expect(await slugs("search=mail")).toEqual(["beta"]);
    expect(await slugs("search=ALPHA")).toEqual(["alpha"]);
    expect(await slugs("search=%25")).toEqual(["gamma_50"]);
    expect(await slugs("search=_")).toEqual(["gamma_50"]);
    expect(await slugs("type=agent")).toEqual([]);
    expect((await slugs("type=workflow")).length).toBe(3);
  });

  test("bad list queries → 400 envelope, never 500", async () => {
    const { h, t } = await seeded();
    for (const q of ["limit=0", "limit=101", "limit=abc", "limit=1e400", `limit=${"9".repeat(5000)}`, "offset=-1", "type=robot", `search=${"s".repeat(10_000)}`]) {
      const r = await h.req("GET", `/v1/automations?${q}`, { key: t.key });
      expect(r.status).toBe(400);
      expect((await json(r)).issues[0].severity).toBe("error");
    }
  });

  test("offset accepts any safe integer like the reference (an offset past the end is an empty page); beyond it → 400", async () => {
    const { h, t } = await seeded();
    const far = await h.req("GET", `/v1/automations?offset=${Number.MAX_SAFE_INTEGER}`, { key: t.key });
    expect(far.status).toBe(200);
    expect(await json(far)).toEqual({ data: [], total: 3, limit: 50, offset: Number.MAX_SAFE_INTEGER });
    const over = await h.req("GET", `/v1/automations?offset=${Number.MAX_SAFE_INTEGER + 1}`, { key: t.key });
    expect(over.status).toBe(400);
    expect((await json(over)).issues[0].field).toBe("offset");
  });

  test("unknown query names are ignored, not refused (the SDKs may add their own)", async () => {
    const { h, t } = await seeded();
    const r = await h.req("GET", "/v1/automations?limit=1&search=alpha&page_size=9&include_archived=true", { key: t.key });
    expect(r.status).toBe(200);
    expect((await json(r)).data.map((a: { slug: string }) => a.slug)).toEqual(["alpha"]);
  });

  test("get by id and by alias workflows.<slug>; detail has schemas; unknown → 404", async () => {
    const { h, t, ids } = await seeded();
    const byId = await json(await h.req("GET", `/v1/automations/${ids[0]}`, { key: t.key }));
    expect(byId.slug).toBe("alpha");
    expect(byId.inputSchema.properties.invoice.type).toBe("object");
    const byAlias = await json(await h.req("GET", "/api/v1/automations/workflows.alpha", { key: t.key }));
    expect(byAlias.id).toBe(ids[0]);
    for (const ref of ["wf_nope", "workflows.nope", "agents.alpha"]) {
      const r = await h.req("GET", `/v1/automations/${ref}`, { key: t.key });
      expect(r.status).toBe(404);
      expect((await json(r)).issues[0].code).toBe("not_found");
    }
  });

  test("triggers: {automationId, type, triggers}", async () => {
    const h = await harness();
    const t = await h.tenant("acme");
    const a = (await create(h, t.key, wf("cronny", { triggers: "[{type: cron, schedule: '0 * * * *'}, {type: email, whitelist: {domains: [example.com]}}]" }).replace("{name: invoice, type: object, required: true}", "{name: email, type: object}"))).body;
    const r = await json(await h.req("GET", "/v1/automations/workflows.cronny/triggers", { key: t.key }));
    expect(r).toEqual({ automationId: a.id, type: "workflow", triggers: { api: false, email: true, manual: false, cron: true } });
  });
});
