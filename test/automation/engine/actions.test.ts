import { describe, expect, test } from "bun:test";
import { hostAllowed } from "../../../src/automation/engine/kinds/action-http";
import { loopbackPerTest, run, testServices } from "./support";

const server = loopbackPerTest();

describe("action.http against a real loopback server", () => {
  test("method, headers and a JSON body are sent; a JSON answer is parsed", async () => {
    const api = server(async (req, _hit, body) => Response.json({ got: JSON.parse(body), auth: req.headers.get("x-token") }, { status: 201, headers: { "x-answer": "yes" } }));
    const r = await run(
      `name: t
steps:
  - name: post
    type: action.http
    with:
      url: "${api.url}/orders?src={{ input.src }}"
      method: POST
      headers: {x-token: "{{ env.TOKEN }}"}
      body: {id: "{{ input.id }}", tags: [a, b]}
output: "{{ steps.post.output }}"
`,
      { src: "wf", id: 7 },
      { services: testServices({ httpAllowHosts: [api.host], env: { TOKEN: "t0k" } }) },
    );
    expect(r.status).toBe("completed");
    expect(api.hits).toHaveLength(1);
    expect(api.hits[0]).toMatchObject({ method: "POST", path: "/orders?src=wf" });
    expect(api.hits[0].headers.get("content-type")).toBe("application/json");
    expect(JSON.parse(api.hits[0].body)).toEqual({ id: 7, tags: ["a", "b"] });
    const out = r.output as { status: number; ok: boolean; headers: Record<string, string>; body: unknown };
    expect(out.status).toBe(201);
    expect(out.ok).toBe(true);
    expect(out.headers["x-answer"]).toBe("yes");
    expect(out.body).toEqual({ got: { id: 7, tags: ["a", "b"] }, auth: "t0k" });
  });

  test("a text answer stays text; a string body is sent as is", async () => {
    const api = server(async (_req, _hit, body) => new Response(`echo:${body}`, { headers: { "content-type": "text/plain" } }));
    const r = await run(`name: t\nsteps: [{name: p, type: action.http, with: {url: "${api.url}/", method: PUT, body: "raw text"}}]\n`, {}, { services: testServices({ httpAllowHosts: [api.host] }) });
    expect((r.output as { p: { body: unknown } }).p.body).toBe("echo:raw text");
  });

  test("hosts outside the allow-list are refused before any request", async () => {
    const api = server();
    const services = testServices({ httpAllowHosts: ["example.org"] });
    const r = await run(`name: t\nsteps: [{name: p, type: action.http, with: {url: "${api.url}/x"}}]\n`, {}, { services });
    expect(r.status).toBe("failed");
    expect(r.error).toMatchObject({ code: "http_forbidden_host", step: "p" });
    expect(r.error?.message).toContain(`host ${api.host} is not in the HTTP allow-list`);
    expect(api.hits).toHaveLength(0);
    const none = await run(`name: t\nsteps: [{name: p, type: action.http, with: {url: "${api.url}/x"}}]\n`);
    expect(none.error?.code).toBe("http_forbidden_host");
    expect(api.hits).toHaveLength(0);
  });

  test("a redirect to a host outside the allow-list is refused", async () => {
    const other = server();
    const api = server(() => new Response(null, { status: 302, headers: { location: `http://localhost:${other.host.split(":")[1]}/stolen` } }));
    const r = await run(`name: t\nsteps: [{name: p, type: action.http, with: {url: "${api.url}/start"}}]\n`, {}, { services: testServices({ httpAllowHosts: [api.host] }) });
    expect(r.error?.code).toBe("http_forbidden_host");
    expect(other.hits).toHaveLength(0);
  });

  test("redirects within the allow-list are followed", async () => {
    const api = server((req) => (new URL(req.url).pathname === "/old" ? new Response(null, { status: 301, headers: { location: "/new" } }) : Response.json({ at: new URL(req.url).pathname })));
    const r = await run(`name: t\nsteps: [{name: p, type: action.http, with: {url: "${api.url}/old"}}]\n`, {}, { services: testServices({ httpAllowHosts: [api.host] }) });
    expect((r.output as { p: { body: unknown } }).p.body).toEqual({ at: "/new" });
  });

  test("a non-2xx answer fails the step unless failOnError is false", async () => {
    const api = server(() => Response.json({ error: "nope" }, { status: 404 }));
    const services = testServices({ httpAllowHosts: [api.host] });
    const failed = await run(`name: t\nsteps: [{name: p, type: action.http, with: {url: "${api.url}/a"}}]\n`, {}, { services });
    expect(failed.error).toMatchObject({ code: "http_error", step: "p" });
    expect(failed.error?.message).toContain("404");
    const tolerated = await run(`name: t\nsteps: [{name: p, type: action.http, with: {url: "${api.url}/a", failOnError: false}}]\n`, {}, { services });
    expect(tolerated.output).toEqual({ p: expect.objectContaining({ status: 404, ok: false, body: { error: "nope" } }) });
  });

  test("the request timeout fails the step with http_timeout", async () => {
    const api = server(async () => {
      await Bun.sleep(2000);
      return new Response("late");
    });
    const r = await run(`name: t\nsteps: [{name: p, type: action.http, with: {url: "${api.url}/slow", timeout: 100}}]\n`, {}, { services: testServices({ httpAllowHosts: [api.host] }) });
    expect(r.error).toMatchObject({ code: "http_timeout", step: "p" });
  });

  test("an unreachable host fails cleanly", async () => {
    const api = server();
    const host = api.host;
    api.stop();
    const r = await run(`name: t\nsteps: [{name: p, type: action.http, with: {url: "http://${host}/"}}]\n`, {}, { services: testServices({ httpAllowHosts: [host] }) });
    expect(r.error?.code).toBe("http_unreachable");
  });

  test("allow-list entries: exact host, host:port, *.suffix", () => {
    const u = (s: string) => new URL(s);
    expect(hostAllowed(u("http://api.example.com/x"), ["api.example.com"])).toBe(true);
    expect(hostAllowed(u("http://api.example.com:8080/x"), ["api.example.com"])).toBe(true);
    expect(hostAllowed(u("http://api.example.com:8080/x"), ["api.example.com:9090"])).toBe(false);
    expect(hostAllowed(u("https://api.example.com/x"), ["api.example.com:443"])).toBe(true);
    expect(hostAllowed(u("http://a.b.example.com/"), ["*.example.com"])).toBe(true);
    expect(hostAllowed(u("http://example.com/"), ["*.example.com"])).toBe(false);
    expect(hostAllowed(u("http://evilexample.com/"), ["*.example.com"])).toBe(false);
    expect(hostAllowed(u("http://api.example.com.evil.net/"), ["api.example.com"])).toBe(false);
    expect(hostAllowed(u("http://[::1]:80/"), ["::1"])).toBe(true);
    expect(hostAllowed(u("http://[::1]:8080/"), ["[::1]:8080"])).toBe(true);
    expect(hostAllowed(u("http://[::1]:8081/"), ["[::1]:8080"])).toBe(false);
  });

  test("a url that is not http(s) is refused", async () => {
    const r = await run(`name: t\nsteps: [{name: p, type: action.http, with: {url: "{{ input.u }}"}}]\n`, { u: "file:///etc/passwd" }, { services: testServices({ httpAllowHosts: ["*"] }) });
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("http_forbidden_host");
  });
});

describe("action.invoke-workflow", () => {
  test("calls services.invokeWorkflow with target, rendered input and version; outputs its result", async () => {
    const calls: unknown[] = [];
    const services = testServices({
      async invokeWorkflow(target, input, opts) {
        calls.push({ target, input, opts });
        return { doubled: (input.n as number) * 2 };
      },
    });
    const r = await run(
      `name: t
steps:
  - {name: sub, type: action.invoke-workflow, with: {workflow: workflows.doubler, version: 1.2.0, input: {n: "{{ input.n }}"}}}
output: "{{ steps.sub.output.doubled }}"
`,
      { n: 21 },
      { services },
    );
    expect(r.output).toBe(42);
    expect(calls).toEqual([{ target: "workflows.doubler", input: { n: 21 }, opts: { version: "1.2.0", step: "sub" } }]);
  });

  test("a failing invoked workflow fails the step", async () => {
    const services = testServices({
      async invokeWorkflow() {
        throw new Error("run run_x failed: boom");
      },
    });
    const r = await run("name: t\nsteps: [{name: sub, type: action.invoke-workflow, with: {workflow: wf_1}}]\n", {}, { services });
    expect(r.error).toMatchObject({ code: "invoke_failed", step: "sub" });
    expect(r.error?.message).toContain("boom");
  });
});

describe("evaluation runs", () => {
  test("action.http reads (GET) run on evaluation runs; writes (POST, PUT, DELETE...) are skipped", async () => {
    const api = server();
    const r = await run(
      `name: t
steps:
  - {name: read, type: action.http, with: {url: "${api.url}/read"}}
  - {name: write, type: action.http, with: {url: "${api.url}/write", method: POST, body: {a: 1}}}
`,
      {},
      { evaluation: true, services: testServices({ httpAllowHosts: [api.host] }) },
    );
    expect(r.status).toBe("completed");
    expect(api.hits.map((h) => h.path)).toEqual(["/read"]);
    expect((r.output as { write: unknown }).write).toEqual({ skipped: true, reason: "side effects are skipped on evaluation runs" });
    const live = await run(`name: t\nsteps: [{name: write, type: action.http, with: {url: "${api.url}/write", method: POST}}]\n`, {}, { services: testServices({ httpAllowHosts: [api.host] }) });
    expect(live.status).toBe("completed");
    expect(api.count("/write")).toBe(1);
  });
});
