// Both OpenAPI documents, exactly as the servers serve them (GET /openapi/json), are clean for client
// generators: (a) Redocly's recommended rules (test/openapi/redocly.yaml) find no error and no warning,
// and only the findings waived with a reason in test/openapi/.redocly.lint-ignore.yaml are ignored;
// (b) openapi-typescript's types for each document type-check a few calls, and refuse wrong ones
// (`// @ts-expect-error`), under the project's TypeScript.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import openapiTS, { astToString, type OpenAPI3 } from "openapi-typescript";
import { harness as automationHarness } from "../automation/app/harness";
import { harness as orderHarness } from "../orders/harness";

const root = join(import.meta.dir, "../..");
const here = import.meta.dir;
let dir = "";
const docs: Record<"orders" | "automation", Record<string, unknown>> = { orders: {}, automation: {} };

type Operation = { operationId?: string };
const operations = (doc: Record<string, unknown>) =>
  Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));

/** Runs a tool of node_modules under Bun (no Node needed), with no network (no telemetry, no update check). */
async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([process.execPath, ...args], {
    cwd: dir,
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1", CI: "true" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "openapi-lint-"));
  const orders = await orderHarness({}, "sqlite");
  const o = await orders.call("GET", "/openapi/json");
  expect(o.status).toBe(200);
  docs.orders = o.body;
  // As a server started without --public-url serves it.
  const automation = await automationHarness({ publicUrlFromRequest: true });
  const a = await automation.app.handle(new Request("http://localhost/openapi/json"));
  expect(a.status).toBe(200);
  docs.automation = (await a.json()) as Record<string, unknown>;
  for (const [name, doc] of Object.entries(docs)) writeFileSync(join(dir, `${name}.json`), JSON.stringify(doc, null, 2));
  copyFileSync(join(here, "redocly.yaml"), join(dir, "redocly.yaml"));
  copyFileSync(join(here, ".redocly.lint-ignore.yaml"), join(dir, ".redocly.lint-ignore.yaml"));
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("OpenAPI documents: redocly lint (recommended rules)", () => {
  // The waivers of .redocly.lint-ignore.yaml, per document: exactly these are ignored, no more, no fewer.
  const waived = { orders: 1, automation: 2 };
  for (const name of ["orders", "automation"] as const) {
    test(`${name}: no errors, no warnings`, async () => {
      const cli = join(root, "node_modules/@redocly/cli/bin/cli.js");
      const r = await run([cli, "lint", name, "--config", join(dir, "redocly.yaml"), "--format", "json"]);
      const report = JSON.parse(r.out) as { totals: { errors: number; warnings: number; ignored: number }; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
      const problems = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
      expect(problems).toEqual([]);
      expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: waived[name] });
      expect(r.code).toBe(0);
    }, 120_000);
  }

  test("every operation has an operationId that is an identifier (generated method names)", () => {
    for (const doc of Object.values(docs)) {
      const ops = operations(doc);
      expect(ops.length).toBeGreaterThan(10);
      for (const { path, method, op } of ops) expect(`${method} ${path} ${op.operationId}`).toMatch(/ [A-Za-z][A-Za-z0-9]*$/);
    }
  });

  test("servers: one relative `/` (resolved against where the document was fetched), or the automation server's --public-url", async () => {
    expect(docs.orders.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    expect(docs.automation.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    const h = await automationHarness({ publicUrl: "https://automation.example.org/base", publicUrlFromRequest: false });
    const doc = (await (await h.app.handle(new Request("http://localhost/openapi/json"))).json()) as { servers: unknown };
    expect(doc.servers).toEqual([{ url: "https://automation.example.org/base", description: "--public-url" }]);
  }, 60_000);
});

// Calls a generated client would make, checked against openapi-typescript's types for each document.
const checks = `
import type { operations as OrderOps, paths as Orders } from "./orders";
import type { paths as Automation } from "./automation";

type Json<T> = T extends { content: { "application/json": infer B } } ? B : never;
type Form<T> = T extends { content: { "application/x-www-form-urlencoded": infer B } } ? B : never;
type Body<T> = T extends { requestBody?: infer R } ? Json<NonNullable<R>> : never;

// --- order-server ---
export const token: Form<NonNullable<Orders["/oauth/token"]["post"]["requestBody"]>> = { grant_type: "password", username: "anna", password: "secret" };
// @ts-expect-error only the password grant
export const otherGrant: Form<NonNullable<Orders["/oauth/token"]["post"]["requestBody"]>> = { grant_type: "client_credentials" };

export const newOrder: Body<Orders["/orders"]["post"]> = { description: "Paint the fence", price: 1500.5 };
// @ts-expect-error price is a number of rubles, not a string
export const badOrder: Body<Orders["/orders"]["post"]> = { description: "x", price: "15" };
// @ts-expect-error description is required
export const noDescription: Body<Orders["/orders"]["post"]> = { price: 15 };

export function describeOrder(o: Json<Orders["/orders"]["post"]["responses"][201]>): string {
  const status: "WAITING" | "IN_PROGRESS" | "READY" | "COMPLETED" = o.status;
  const performer: string | null = o.performerName;
  return \`\${o.id} \${status} \${performer ?? "-"} \${o.price.toFixed(2)}\`;
}
export const page: NonNullable<Orders["/orders"]["get"]["parameters"]["query"]> = { page: 0, size: 20, sort: ["price,asc"] };
// @ts-expect-error size is an integer
export const badPage: NonNullable<Orders["/orders"]["get"]["parameters"]["query"]> = { size: "20" };
export const take: Orders["/orders/{id}/take"]["patch"]["parameters"]["path"] = { id: 7 };
export const error: Json<Orders["/orders/{id}/accept"]["patch"]["responses"][409]> = { status: 409, message: "Wrong state" };

// operationIds name the operations a generated client exposes.
export const byId: OrderOps["createOrder"] = {} as Orders["/orders"]["post"];
export const ids: (keyof OrderOps)[] = ["createToken", "registerUser", "getAuthenticatedUser", "listWaitingOrders", "createOrder", "getOrder", "takeOrder", "passOrder", "acceptOrder", "listUserOrders", "getHealth"];
// @ts-expect-error no such operation
export const noId: keyof OrderOps = "postOrders";

// --- automation-server ---
export const workflow: Body<Automation["/v1/automations"]["post"]> = { yaml: "name: invoices\\nsteps: []\\n" };
// @ts-expect-error the field is yaml
export const badWorkflow: Body<Automation["/api/v1/automations"]["post"]> = { yml: "name: x" };

export function triggers(a: Json<Automation["/v1/automations"]["post"]["responses"][201]>): string[] {
  const kind: "workflow" | "agent" = a.type;
  return Object.entries(a.triggers).filter(([, on]) => on).map(([k]) => \`\${kind}:\${a.slug}:\${k}\`);
}
export const versions: NonNullable<Automation["/v1/automations/{id}/versions"]["get"]["parameters"]["path"]> = { id: "aut_1" };

export const upload: Body<Automation["/api/v1/files/uploads"]["post"]> = { filename: "a.pdf", size: 1024, transport: "presigned-put" };
// @ts-expect-error no such transport
export const badUpload: Body<Automation["/api/v1/files/uploads"]["post"]> = { filename: "a.pdf", size: 1024, transport: "ftp" };
export function uploadUrl(n: Json<Automation["/v1/files/uploads"]["post"]["responses"][200]>): string | undefined {
  return n.transport === "presigned-put" ? n.url : undefined;
}

export function firstIssue(e: Json<Automation["/v1/automations/{id}"]["get"]["responses"][404]>): string {
  const severity: "error" | "warning" = e.issues[0].severity;
  return \`\${e.requestId} \${e.issues[0].code} \${severity}\`;
}
`;

describe("OpenAPI documents: openapi-typescript types", () => {
  test("generated types type-check calls against both documents (tsc --noEmit)", async () => {
    for (const [name, doc] of Object.entries(docs)) {
      writeFileSync(join(dir, `${name}.ts`), astToString(await openapiTS(structuredClone(doc) as unknown as OpenAPI3)));
    }
    writeFileSync(join(dir, "calls.ts"), checks);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "ESNext", moduleResolution: "Bundler", lib: ["ES2022"], types: [], skipLibCheck: true, noUnusedLocals: false },
        files: ["calls.ts"],
      }),
    );
    const r = await run([join(root, "node_modules/typescript/bin/tsc"), "-p", join(dir, "tsconfig.json")]);
    expect(r.out + r.err).toBe("");
    expect(r.code).toBe(0);
  }, 120_000);
});
