// The role matrix, generated from the route table (the OpenAPI document the app builds from its routes):
// for every route and every role, a session of that role is refused (403 insufficient_scope) exactly
// when the role's scopes (tenancy/roles.ts) lack a scope the route needs, and a key carrying the same
// scopes gets the same answer: one check decides both. What a route needs is found by asking it with
// keys, one scope at a time, so a new route is covered without editing this file. The table printed in
// docs/automation/people.md is held to the code too.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { json } from "../app/harness";
import { hasScope } from "../../../src/automation/tenancy/service";
import { ROLES } from "../../../src/automation/people/store";
import { ROLE_SCOPES } from "../../../src/automation/tenancy/roles";
import { as, peopleHarness } from "./support";

type Route = { method: string; path: string; group: string };

/** The scope a 403 `insufficient_scope` names; undefined for any other answer (signed URLs refuse with their own 403s). */
async function neededScope(r: Response): Promise<string | undefined> {
  if (r.status !== 403) return undefined;
  const issue = (await json(r)).issues[0];
  if (issue.code !== "insufficient_scope") return undefined;
  return /lacks the scope (\S+)$/.exec(issue.message)?.[1];
}

const missing = async (r: Response) => (await neededScope(r)) !== undefined;

describe("role matrix", () => {
  test("every route group, every role: a session is refused exactly where its role's scopes are, and a key with those scopes alike", async () => {
    const { h, person } = await peopleHarness();
    const doc = await json(await h.req("GET", "/openapi/json"));
    const routes: Route[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      if (!path.startsWith("/v1/") || path.startsWith("/v1/auth/")) continue;
      for (const method of Object.keys(ops)) {
        if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
        routes.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, "x_missing"), group: path.split("/")[2]! });
      }
    }
    expect(routes.length).toBeGreaterThan(50);

    // What each route needs, asked with keys: start with a scope that grants nothing, add what the 403 names.
    const needs = new Map<Route, string[]>();
    for (const route of routes) {
      const scopes = ["nothing:read"];
      for (;;) {
        const key = await h.key("acme", scopes);
        const need = await neededScope(await h.req(route.method, route.path, { key }));
        if (!need) break;
        expect(scopes).not.toContain(need);
        scopes.push(need);
      }
      needs.set(route, scopes.slice(1));
    }
    const scoped = [...needs.values()].filter((n) => n.length > 0).length;
    expect(scoped).toBeGreaterThan(routes.length / 2);

    const checked = new Map<string, Set<string>>();
    for (const role of ROLES) {
      const session = await person(role);
      const key = await h.key("acme", [...ROLE_SCOPES[role]]);
      for (const route of routes) {
        const forbidden = needs.get(route)!.some((s) => !hasScope([...ROLE_SCOPES[role]], s));
        const bySession = await as(h, session, route.method, route.path);
        const byKey = await h.req(route.method, route.path, { key });
        const label = `${role} ${route.method} ${route.path} (needs ${needs.get(route)!.join(", ") || "nothing"})`;
        expect({ label, refused: await missing(bySession) }).toEqual({ label, refused: forbidden });
        expect({ label, refused: await missing(byKey) }).toEqual({ label, refused: forbidden });
        expect({ label, status: bySession.status === 401 ? await bySession.text() : "ok" }).toEqual({ label, status: "ok" });
        expect(bySession.status).toBeLessThan(500);
        checked.set(route.group, (checked.get(route.group) ?? new Set()).add(role));
      }
    }
    const groups = new Set(routes.map((r) => r.group));
    for (const g of groups) expect([g, [...checked.get(g)!].sort()]).toEqual([g, [...ROLES].sort()]);
    // The reviewer's promised powers, spelled out once as a sanity check on the table.
    expect(ROLE_SCOPES.reviewer.some((s) => s === "automations:write" || s === "automations:*")).toBe(false);
  }, 300_000);

  test("docs/automation/people.md prints the table the code holds", () => {
    const doc = readFileSync(join(import.meta.dir, "../../../docs/automation/people.md"), "utf8");
    for (const role of ROLES) {
      const row = doc.split("\n").find((l) => l.startsWith(`| \`${role}\``));
      expect(row).toBeDefined();
      const listed = [...row!.split("|")[2]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]).sort();
      expect([role, listed]).toEqual([role, [...ROLE_SCOPES[role]].sort()]);
    }
  });
});
