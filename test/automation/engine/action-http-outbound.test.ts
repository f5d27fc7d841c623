// action.http and the server's own network: a host name on the allow-list must also resolve to public
// addresses (or ones in --outbound-allow), on every redirect hop, and the request goes to the address
// that was checked with the name in Host; an IP address the operator lists exactly is reached as listed.
import { afterAll, describe, expect, test } from "bun:test";
import { lookup } from "node:dns/promises";
import { run, testServices } from "./support";

const servers: { stop(closeActive?: boolean): void }[] = [];
afterAll(() => {
  for (const s of servers) s.stop(true);
});

/** A loopback HTTP server on `hostname` that records each request's Host header. */
function api(hostname: string, respond: (req: Request) => Response = () => Response.json({ ok: true })) {
  const hosts: string[] = [];
  const s = Bun.serve({
    hostname,
    port: 0,
    fetch(req) {
      hosts.push(req.headers.get("host") ?? "");
      return respond(req);
    },
  });
  servers.push(s);
  return { port: s.port!, hosts, stop: () => s.stop(true) };
}

const step = (url: string) => `name: t\nsteps: [{name: p, type: action.http, with: {url: "${url}"}}]\n`;
const localAddress = async () => (await lookup("localhost", { all: true, verbatim: true }))[0].address;

describe("action.http: internal addresses", () => {
  test("a listed name that resolves to loopback (localhost) is refused without --outbound-allow; nothing is sent", async () => {
    const local = api(await localAddress());
    const r = await run(step(`http://localhost:${local.port}/x`), {}, { services: testServices({ httpAllowHosts: [`localhost:${local.port}`] }) });
    expect(r.status).toBe("failed");
    expect(r.error).toMatchObject({ code: "http_forbidden_host", step: "p" });
    expect(r.error?.message).toContain("localhost resolves to an address inside this server's network");
    expect(local.hosts).toHaveLength(0);
    local.stop();
  });

  test("with --outbound-allow the checked address is called with the name in Host", async () => {
    const address = await localAddress();
    const local = api(address);
    const r = await run(step(`http://localhost:${local.port}/x`), {}, { services: testServices({ httpAllowHosts: [`localhost:${local.port}`], outboundAllow: ["127.0.0.0/8", "::1"] }) });
    expect(r.status).toBe("completed");
    expect(local.hosts).toEqual([`localhost:${local.port}`]);
    local.stop();
  });

  test("a redirect from an allowed address to a listed name that resolves inside is refused", async () => {
    const address = await localAddress();
    const inside = api(address);
    const start = api("127.0.0.1", () => new Response(null, { status: 302, headers: { location: `http://localhost:${inside.port}/stolen` } }));
    const r = await run(step(`http://127.0.0.1:${start.port}/start`), {}, { services: testServices({ httpAllowHosts: [`127.0.0.1:${start.port}`, `localhost:${inside.port}`] }) });
    expect(r.error?.code).toBe("http_forbidden_host");
    expect(start.hosts).toHaveLength(1);
    expect(inside.hosts).toHaveLength(0);
    start.stop();
    inside.stop();
  });

  test("metadata and private literals are refused unless the operator lists that address itself", async () => {
    const r = await run(step("http://169.254.169.254/latest/meta-data/"), {}, { services: testServices({ httpAllowHosts: ["*.254"] }) });
    expect(r.error?.code).toBe("http_forbidden_host");
    expect(r.error?.message).toContain("169.254.169.254 is a cloud metadata address");
    const listed = api("127.0.0.1");
    const ok = await run(step(`http://127.0.0.1:${listed.port}/`), {}, { services: testServices({ httpAllowHosts: [`127.0.0.1:${listed.port}`] }) });
    expect(ok.status).toBe("completed");
    listed.stop();
  });
});
