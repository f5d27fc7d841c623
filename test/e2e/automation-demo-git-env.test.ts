// The compiled server started with GIT_DIR (and GIT_WORK_TREE) in its environment, as from a git hook or
// under `git bisect run`: the demo agent's repository is made where it belongs, and the repository
// those variables name is left exactly as it was. (With them passed on, `git -C <dir> init` re-initialised
// the enclosing repository, made it bare, and the demo's commits and tags went there.)
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gitSync, testRepo } from "../automation/agents/git-repo";
import { demoServer } from "./automation-demo";

const bystander = testRepo("bystander");
const head = bystander.commit({ "README.md": "someone else's work\n" }, "their commit");
const state = () => ({
  head: gitSync(bystander.dir, "rev-parse", "HEAD"),
  tags: gitSync(bystander.dir, "tag", "--list"),
  bare: gitSync(bystander.dir, "config", "core.bare"),
  config: readFileSync(join(bystander.dir, ".git", "config"), "utf8"),
  commits: gitSync(bystander.dir, "rev-list", "--all", "--count"),
});
const before = state();

const demo = await demoServer({
  prefix: "automation-demo-git-env-",
  workers: 1,
  env: { GIT_DIR: join(bystander.dir, ".git"), GIT_WORK_TREE: bystander.dir, GIT_INDEX_FILE: join(bystander.dir, ".git", "index") },
});
afterAll(() => demo.close());

test("--demo under GIT_DIR: the demo agent is made and the repository GIT_DIR names is untouched", async () => {
  await demo.boot();
  let agent: { slug: string; type: string } | undefined;
  for (let i = 0; i < 200 && !agent; i++) {
    const list = (await (await demo.api("GET", "/v1/automations?limit=100")).json()) as { data: { slug: string; type: string }[] };
    agent = list.data.find((a) => a.type === "agent");
    if (!agent) await Bun.sleep(50);
  }
  expect(agent?.slug).toBe("demo-assistant");
  const versions = (await (await demo.api("GET", "/v1/automations/agents.demo-assistant/versions")).json()) as { data: { version: string }[] };
  expect(versions.data.map((v) => v.version).sort()).toEqual(["1.0.0", "1.1.0"]);
  expect(state()).toEqual(before);
  expect(before.head).toBe(head);
}, 120_000);
