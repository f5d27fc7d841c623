// People through HTTP: a harness with helpers to make users of a role and sign them in.
import { harness, json, type Harness } from "../app/harness";
import { createUser } from "../../../src/automation/people/service";

export const PASSWORD = "correct-horse-battery-9";

export interface Person {
  email: string;
  cookie: string;
  csrf: string;
  userId: string;
}

export async function peopleHarness(over: Parameters<typeof harness>[0] = {}) {
  const h = await harness(over);
  const t = await h.tenant("acme");
  const deps = { people: h.ctx.storage.people, tenancy: h.ctx.storage.tenancy, clock: h.clock };
  let n = 0;
  /** A user of `role` in acme, signed in. */
  async function person(role: string, tenant = "acme"): Promise<Person> {
    const email = `p${++n}-${role}@example.com`;
    await createUser(deps, { email, name: `Person ${n}`, password: PASSWORD, tenant, role });
    return signIn(h, email, PASSWORD);
  }
  return { h, t, deps, person };
}

export async function signIn(h: Harness, email: string, password: string, headers: Record<string, string> = {}): Promise<Person> {
  const r = await h.req("POST", "/v1/auth/sessions", { body: { email, password }, headers });
  if (r.status !== 201) throw new Error(`sign-in ${r.status}: ${await r.text()}`);
  const set = r.headers.get("set-cookie") ?? "";
  const body = await json(r);
  return { email, cookie: set.split(";")[0]!, csrf: body.csrfToken, userId: body.user.id };
}

/** A request as the person's browser sends it (cookie; same-origin Origin on writes unless told otherwise). */
export function as(h: Harness, p: Person, method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { cookie: p.cookie, ...(method === "GET" ? {} : { origin: "http://localhost" }), ...opts.headers };
  return h.req(method, path, { body: opts.body, headers });
}
