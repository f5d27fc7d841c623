// No import circle inside src/quotas: static, dynamic and type-only imports all count, since a circle of
// any kind ties two layers together. (The repository-wide check lives elsewhere; this one is the
// quick guard for this product's folders.)
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dir, "../../src/quotas");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.tsx?$/.test(n) ? [p] : [];
  });
}

function target(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  return [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((p) => existsSync(p) && statSync(p).isFile());
}

function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const f of sources(root)) {
    const text = readFileSync(f, "utf8");
    const deps: string[] = [];
    for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)) {
      const t = target(f, m[1]);
      if (t && t.startsWith(root)) deps.push(t);
    }
    g.set(f, deps);
  }
  return g;
}

/** Every circle found by a depth-first walk, each as the list of files round it. */
function circles(g: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const walk = (f: string) => {
    state.set(f, "open");
    stack.push(f);
    for (const d of g.get(f) ?? []) {
      if (state.get(d) === "open") found.push([...stack.slice(stack.indexOf(d)), d]);
      else if (!state.has(d)) walk(d);
    }
    stack.pop();
    state.set(f, "done");
  };
  for (const f of g.keys()) if (!state.has(f)) walk(f);
  return found;
}

describe("src/quotas imports", () => {
  test("form no circle", () => {
    const g = graph();
    expect(g.size).toBeGreaterThan(30);
    expect(circles(g).map((c) => c.map((f) => relative(root, f)).join(" -> "))).toEqual([]);
  });

  test("the check sees a circle when there is one", () => {
    const g = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]]]);
    expect(circles(g)).toEqual([["a", "b", "c", "a"]]);
  });
});
