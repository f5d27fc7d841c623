// Which registry `quotas --check-update` asks: the one the user's npm is configured for, read from the
// environment and npm's config files as npm reads them (docs/quotas/install.md, "Update check").
import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { registryUrl } from "../../src/quotas/fetch/update";
import { tempHome, type TempHome } from "./helpers";

let h: TempHome;
afterEach(() => h?.cleanup());

/** A ctx whose environment holds only `env` (and the temp HOME), the global npmrc under the temp dir. */
function ctxWith(env: Record<string, string>) {
  h = tempHome({ NPM_CONFIG_GLOBALCONFIG: "", npm_config_globalconfig: "", ...env });
  return { ...h.ctx, env: { ...h.env, npm_config_prefix: join(h.home, "prefix") } };
}

test("npm_config_registry (or NPM_CONFIG_REGISTRY) wins over every file", () => {
  const ctx = ctxWith({ npm_config_registry: "http://env.example/npm/" });
  h.write(".npmrc", "registry=http://user.example/\n");
  expect(registryUrl(ctx)).toBe("http://env.example/npm");
  expect(registryUrl({ ...ctx, env: { ...ctx.env, npm_config_registry: undefined, NPM_CONFIG_REGISTRY: "http://upper.example" } })).toBe("http://upper.example");
});

test("then registry= of ~/.npmrc, among comments, other keys and scoped registries, with ${VAR} expanded", () => {
  const ctx = ctxWith({ MIRROR: "mirror.example" });
  h.write(".npmrc", "; comment\n@acme:registry=https://acme.example/\n//acme.example/:_authToken=x\n  registry = https://${MIRROR}/npm/ \nfund=false\n");
  h.write("prefix/etc/npmrc", "registry=http://global.example/\n");
  expect(registryUrl(ctx)).toBe("https://mirror.example/npm");
});

test("NPM_CONFIG_USERCONFIG names another user npmrc", () => {
  const ctx = ctxWith({});
  const other = h.write("elsewhere/npmrc", "registry=http://other.example/\n");
  h.write(".npmrc", "registry=http://user.example/\n");
  expect(registryUrl({ ...ctx, env: { ...ctx.env, NPM_CONFIG_USERCONFIG: other } })).toBe("http://other.example");
});

test("then npm's global npmrc under the prefix, then registry.npmjs.org", () => {
  const ctx = ctxWith({});
  h.write(".npmrc", "fund=false\n");
  expect(registryUrl(ctx)).toBe("https://registry.npmjs.org");
  h.write("prefix/etc/npmrc", 'registry="http://global.example/"\n');
  expect(registryUrl(ctx)).toBe("http://global.example");
});
