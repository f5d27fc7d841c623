// Every relative link in the README and under docs/ resolves: the file exists and, when the link names
// an anchor, the target page has a heading with that GitHub slug.
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { stepKinds } from "../../src/automation/engine/registry";
import { root } from "../e2e/support";

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return markdownFiles(p);
    return p.endsWith(".md") ? [p] : [];
  });
}

/** The text outside fenced code blocks and inline code spans. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} +(.+?) *$/gm)) {
    const base = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const pages = [join(root, "README.md"), ...markdownFiles(join(root, "docs"))];

test("the README is a short front door (at most 150 lines)", () => {
  expect(readFileSync(join(root, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(150);
});

test("every product has its page under docs/, plus architecture and benchmarks", () => {
  for (const p of ["orders/README.md", "automation/README.md", "quotas/README.md", "architecture.md", "benchmarks.md"]) {
    expect(existsSync(join(root, "docs", p))).toBe(true);
  }
});

test("every relative link in README.md and docs/ resolves, anchors included", () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of pages) {
    const text = readFileSync(page, "utf8");
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      const href = m[1];
      if (/^[a-z]+:/i.test(href)) continue; // http(s), mailto: no network in tests
      checked++;
      const [path, anchor] = href.split("#");
      const target = path ? join(dirname(page), decodeURIComponent(path)) : page;
      const where = `${relative(root, page)} → ${href}`;
      if (!existsSync(target)) {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (anchor && !anchors(readFileSync(target, "utf8")).has(anchor)) broken.push(`${where}: no heading #${anchor}`);
    }
  }
  expect(broken).toEqual([]);
  expect(checked).toBeGreaterThan(20);
});

test("the step-kind table in docs/automation/runs.md names every registered kind, and none that is not", () => {
  const runs = readFileSync(join(root, "docs/automation/runs.md"), "utf8");
  const section = runs.split(/^## Step kinds$/m)[1]?.split(/^## /m)[0] ?? "";
  // A row's first cell names its kinds (`control.if` / `control.switch`); the header row names none.
  const listed = new Set(section.split("\n").flatMap((line) => (line.startsWith("| `") ? [...line.split("|")[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]) : [])));
  const registered = [...stepKinds.keys()];
  expect(registered.filter((k) => !listed.has(k))).toEqual([]);
  expect([...listed].filter((k) => !stepKinds.has(k))).toEqual([]);
  expect(listed.size).toBe(registered.length);
});
