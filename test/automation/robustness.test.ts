// Issue 27's smaller findings, through the HTTP surface: an unsatisfiable Range on a run artifact is a
// 416 in the error envelope (as on /v1/files/{id}/content), and a YAML document nested thousands deep
// is a 400 that says so, answered at once.
import { describe, expect, test } from "bun:test";
import { json, runsHarness } from "./runs/support";

const withDoc = `
name: with-doc
inputs:
  - {name: doc, type: file, required: true}
steps:
  - {name: s, type: transform.set, with: {fields: {x: 1}}}
`;

describe("run artifact ranges", () => {
  test("206 for a satisfiable range, 416 with the envelope and Content-Range for an unsatisfiable one", async () => {
    const h = await runsHarness();
    await h.deploy(withDoc);
    const form = new FormData();
    form.set("file", new File(["0123456789"], "digits.txt", { type: "text/plain" }));
    const fileId = (await json(await h.req("POST", "/v1/files", { key: h.t.key, body: form }))).id;
    const run = await json(await h.post("/v1/runs", { target: "workflows.with-doc", input: { doc: { $fileId: fileId } } }));
    const path = `/v1/runs/${run.id}/artifacts/${encodeURIComponent("input/doc/digits.txt")}`;

    const part = await h.req("GET", path, { key: h.t.key, headers: { range: "bytes=2-4" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 2-4/10");
    expect(await part.text()).toBe("234");

    const bad = await h.req("GET", path, { key: h.t.key, headers: { range: "bytes=50-60" } });
    expect(bad.status).toBe(416);
    expect(bad.headers.get("content-type")).toStartWith("application/json");
    expect(bad.headers.get("content-range")).toBe("bytes */10");
    const body = (await bad.json()) as { issues: { code: string; message: string }[]; requestId: string };
    expect(body.issues[0].code).toBe("range_not_satisfiable");
    expect(body.requestId).toBeString();

    expect(await (await h.req("GET", path, { key: h.t.key })).text()).toBe("0123456789");
  });
});

describe("deeply nested YAML", () => {
  test("20,000 levels (flow or block) are refused with a 400 naming the nesting, quickly", async () => {
    const h = await runsHarness();
    const deepFlow = `name: deep\nsteps: []\nx: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`;
    const deepMap = `name: deep\nsteps: []\nx: ${"{a: ".repeat(20_000)}1${"}".repeat(20_000)}\n`;
    const deepBlock = `name: deep\nsteps: []\nx:\n${Array.from({ length: 300 }, (_, i) => `${" ".repeat(i + 1)}k${i}:`).join("\n")} 1\n`;
    for (const yaml of [deepFlow, deepMap, deepBlock]) {
      const started = performance.now();
      const r = await h.post("/v1/automations", { yaml });
      expect(r.status).toBe(400);
      const text = JSON.stringify(await r.json());
      expect(text).toContain("nested deeper than 100 levels");
      expect(text).not.toContain("call stack");
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });
});

describe("undecodable path parameters", () => {
  test("a lone-surrogate or broken escape in a path parameter is a 400 naming it, on every route (the fuzzer's 500 on /sync)", async () => {
    const h = await runsHarness();
    for (const [method, path] of [
      ["POST", "/api/v1/automations/%ED%A0%80/sync"],
      ["GET", "/v1/automations/%ED%A0%80/versions"],
      ["GET", "/v1/runs/%E0%A4%A/steps"],
    ] as const) {
      const r = await h.req(method, path, { key: h.t.key, ...(method === "POST" ? { body: "{}", headers: { "content-type": "application/json" } } : {}) });
      expect(r.status).toBe(400);
      expect((await json(r)).issues[0]).toMatchObject({ code: "invalid_path" });
    }
  });
});
