// Text PostgreSQL cannot store (NUL, lone UTF-16 surrogates) is refused at the edge with a 400 naming
// the field, on both backends (issue 36 part 4: PostgreSQL refused NUL with `invalid byte sequence for
// encoding "UTF8": 0x00` and the server answered 500). These requests run on a PostgreSQL database
// whatever backend the pass is on: that is where they failed.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { zipSync } from "fflate";
import { freshPostgresDb } from "../../support/postgres";
import { harness, json, type Harness } from "./harness";

setDefaultTimeout(60_000);

const backends = { sqlite: { db: undefined }, postgres: async () => ({ db: await freshPostgresDb(), dbPool: 3, dbIdleTimeout: 1 }) } as const;

async function setup(backend: keyof typeof backends) {
  const over = backend === "sqlite" ? backends.sqlite : await backends.postgres();
  const h = await harness(over);
  const a = await h.tenant("nul-a");
  const b = await h.tenant("nul-b");
  const yaml = "name: nul-flow\ninputs: [{name: name, type: string}]\nsteps: [{name: s, type: transform.set, with: {fields: {x: \"{{ input.name }}\"}}}]\n";
  const wf = await json(await h.req("POST", "/v1/automations", { key: a.key, body: { yaml } }));
  expect(wf.id).toBeString();
  return { h, a, b, wf: wf.id as string };
}

async function refused(h: Harness, method: string, path: string, key: string, field: string, body?: unknown) {
  const r = await h.req(method, path, { key, body });
  const text = await r.text();
  expect({ request: `${method} ${path}`, status: r.status }).toEqual({ request: `${method} ${path}`, status: 400 });
  const env = JSON.parse(text);
  expect(env.issues[0]).toMatchObject({ field, code: "invalid_text" });
  expect(typeof env.requestId).toBe("string");
}

for (const backend of ["postgres", "sqlite"] as const) {
  describe(`unstorable text is a 400 naming the field [${backend}]`, () => {
    test("NUL in path and query parameters, under /v1 and /api/v1, with another tenant's key too", async () => {
      const { h, a, b } = await setup(backend);
      for (const prefix of ["/v1", "/api/v1"]) {
        await refused(h, "GET", `${prefix}/files/a%00b`, a.key, "id");
        await refused(h, "GET", `${prefix}/runs?source=a%00b`, a.key, "source");
        await refused(h, "POST", `${prefix}/runs/%00/cancel`, a.key, "id");
        await refused(h, "GET", `${prefix}/automations/%00/schedules`, a.key, "id");
        await refused(h, "GET", `${prefix}/automations/%00/schedules`, b.key, "id");
        // A lone surrogate cannot be sent as UTF-8; the bytes a broken client would send (CESU-8) are an
        // undecodable path parameter, and decoded to U+FFFD in a query (storable).
        const path = await h.req("GET", `${prefix}/files/a%ED%A0%80b`, { key: a.key });
        expect({ status: path.status, code: (await json(path)).issues[0].code }).toEqual({ status: 400, code: "invalid_path" });
        expect((await h.req("GET", `${prefix}/runs?source=a%ED%A0%80b`, { key: a.key })).status).toBe(200);
      }
      // Still answered as before once the text is storable.
      expect((await h.req("GET", "/v1/runs?source=ab", { key: a.key })).status).toBe(200);
      expect((await h.req("GET", "/v1/files/ab", { key: a.key })).status).toBe(404);
    });

    test("NUL and lone surrogates inside JSON bodies: run inputs, workflow YAML, dataset examples, e-mail servers", async () => {
      const { h, a, wf } = await setup(backend);
      await refused(h, "POST", "/v1/runs", a.key, "input.name", { target: `workflows.${wf}`, input: { name: "a\u0000b" } });
      await refused(h, "POST", "/v1/runs", a.key, "input.name", { target: `workflows.${wf}`, input: { name: "a\uD800b" } });
      await refused(h, "POST", "/v1/automations", a.key, "yaml", { yaml: "name: a\u0000b\nsteps: []\n" });
      // A YAML escape makes a NUL out of a body that has none (was a 500 on PostgreSQL too).
      await refused(h, "POST", "/v1/automations", a.key, "yaml.description", { yaml: 'name: ab\ndescription: "x\\0y"\nsteps: [{name: s, type: transform.set, with: {fields: {x: 1}}}]\n' });
      await refused(h, "POST", `/v1/automations/${wf}/examples`, a.key, "annotation", { name: "ex", input: {}, annotation: "a\u0000b" });
      await refused(h, "POST", `/v1/automations/${wf}/examples`, a.key, "input.q", { name: "ex", input: { q: "a\u0000b" } });
      await refused(h, "POST", `/v1/automations/${wf}/examples`, a.key, "metadata", { name: "ex", input: {}, metadata: { "a\u0000b": 1 } });
      await refused(h, "POST", "/v1/email-servers", a.key, "name", { transport: "resend", name: "a\u0000b", fromEmail: "a@example.com", apiKey: "re_x" });
      // A dataset import: the JSON entries of the ZIP are stored as JSON text.
      const form = new FormData();
      form.set("file", new File([zipSync({ "examples/ex/input.json": new TextEncoder().encode('{"q":"a\\u0000b"}') })], "d.zip", { type: "application/zip" }));
      const imported = await h.req("POST", `/v1/automations/${wf}/dataset/import`, { key: a.key, body: form });
      const importEnv = await json(imported);
      expect({ status: imported.status, code: importEnv.issues[0].code }).toEqual({ status: 400, code: "invalid_archive" });
      expect(importEnv.issues[0].message).toContain("q contains a NUL character");
      // A storable body is still accepted.
      expect((await h.req("POST", "/v1/runs", { key: a.key, body: { target: `workflows.${wf}`, input: { name: "a\\u0000b ok" } } })).status).toBe(201);
    });
  });
}
