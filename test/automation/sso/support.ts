// SSO through HTTP: a people harness whose server trusts the test provider (provider.ts), and a sign-in
// driven as a browser would: our start → the provider's authorization endpoint and login → our callback.
import type { Harness } from "../app/harness";
import { peopleHarness } from "../people/support";
import type { OidcProviderConfig } from "../../../src/automation/config/oidc";
import type { TestProvider } from "./provider";

export const REDIRECT = "http://localhost/v1/auth/oidc/sso/callback";

export function providerConfig(op: TestProvider, over: Partial<OidcProviderConfig> = {}): OidcProviderConfig {
  return {
    id: "sso",
    name: "Test SSO",
    issuer: op.issuer,
    clientId: op.clientId,
    clientSecret: op.clientSecret,
    scopes: ["openid", "email", "profile", "groups"],
    groupsClaim: ["groups"],
    roleMap: [
      { group: "automation-admins", role: "admin", tenant: "acme" },
      { group: "automation-reviewers", role: "reviewer", tenant: "acme" },
    ],
    allowedDomains: ["example.com"],
    trustEmail: false,
    ...over,
  };
}

export async function ssoHarness(op: TestProvider, over: Partial<OidcProviderConfig> = {}, more: OidcProviderConfig[] = []) {
  return peopleHarness({ oidc: [providerConfig(op, over), ...more] });
}

/** Follows the provider's redirects (with its cookies) until it sends the browser back to us; our callback's address. */
export async function atProvider(location: string, backTo = "http://localhost/", jar = new Map<string, string>()): Promise<string> {
  let url = location;
  for (let i = 0; i < 10; i++) {
    if (url.startsWith(backTo)) return url;
    const r = await fetch(url, { redirect: "manual", headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } });
    for (const c of r.headers.getSetCookie()) {
      const kv = c.split(";")[0]!;
      jar.set(kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1));
    }
    const next = r.headers.get("location");
    if (!next) throw new Error(`the provider answered ${r.status} without a redirect: ${(await r.text()).slice(0, 300)}`);
    url = new URL(next, url).href;
  }
  throw new Error("the provider redirected more than 10 times");
}

export interface SsoAttempt {
  res: Response;
  /** The flow cookie our start set (name=value). */
  flow: string;
  /** Our callback's path and query, as the provider sent the browser. */
  callback: string;
  /** The session cookie (name=value) when one was set. */
  session?: string;
}

/** A sign-in through the provider as `login`; `tamper` may change the callback address before it is opened. */
export async function ssoSignIn(h: Harness, login: string, opts: { provider?: string; tamper?: (callback: URL) => void; cookie?: string; jar?: Map<string, string>; next?: string } = {}): Promise<SsoAttempt> {
  const next = opts.next === undefined ? "" : `&next=${encodeURIComponent(opts.next)}`;
  const start = await h.req("GET", `/v1/auth/oidc/${opts.provider ?? "sso"}/start?login_hint=${encodeURIComponent(login)}${next}`);
  if (start.status !== 303) throw new Error(`start answered ${start.status}: ${await start.text()}`);
  const flow = start.headers.getSetCookie().find((c) => c.startsWith("automation_oidc="))!.split(";")[0]!;
  const back = new URL(await atProvider(start.headers.get("location")!, "http://localhost/", opts.jar));
  opts.tamper?.(back);
  const callback = back.pathname + back.search;
  return { flow, callback, ...(await callbackWith(h, callback, [flow, opts.cookie].filter(Boolean).join("; "))) };
}

/** Opens our callback with these cookies. */
export async function callbackWith(h: Harness, callback: string, cookie: string): Promise<{ res: Response; session?: string }> {
  const res = await h.req("GET", callback, { headers: cookie ? { cookie } : {} });
  const session = res.headers.getSetCookie().find((c) => c.startsWith("automation_session=") && !c.startsWith("automation_session=;"))?.split(";")[0];
  return { res, ...(session ? { session } : {}) };
}

/** Signs out at the provider as the browser with `jar` would (its confirmation form posted): it tells every client by back-channel. */
export async function signOutAtProvider(op: TestProvider, jar: Map<string, string>): Promise<void> {
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const keep = (r: Response) => {
    for (const c of r.headers.getSetCookie()) {
      const kv = c.split(";")[0]!;
      jar.set(kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1));
    }
  };
  const form = await fetch(`${op.issuer}/session/end?client_id=${op.clientId}`, { headers: { cookie: cookie() } });
  keep(form);
  const html = await form.text();
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
  if (!action || !xsrf) throw new Error(`no logout form at the provider: ${html.slice(0, 300)}`);
  const done = await fetch(new URL(action, op.issuer), { method: "POST", redirect: "manual", headers: { cookie: cookie(), "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ xsrf, logout: "yes" }) });
  if (done.status >= 400) throw new Error(`the provider's logout answered ${done.status}: ${(await done.text()).slice(0, 300)}`);
}
