// The import graph of src/: every relative import (static, `import type`, re-exports and dynamic
// `import("./x")`) between files, and the circles in it (strongly connected components of more than
// one file, or a file importing itself).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [p] : [];
  });
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|^import\s+["']([^"']+)["']/gm;

function resolveImport(from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const base = resolve(dirname(from), spec);
  for (const p of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts"), join(base, "index.tsx")]) {
    if (existsSync(p) && statSync(p).isFile()) return p;
  }
  return undefined;
}

/** Edges file → imported files, paths relative to `root`, for the files under `root/dir`. */
export function importGraph(root: string, dir = "src"): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const files = sourceFiles(join(root, dir));
  for (const file of files) {
    const text = readFileSync(file, "utf8").replace(/^\s*\/\/.*$/gm, "");
    const out = new Set<string>();
    for (const m of text.matchAll(IMPORT)) {
      const target = resolveImport(file, m[1] ?? m[2] ?? m[3]);
      if (target && target.startsWith(join(root, dir))) out.add(relative(root, target));
    }
    graph.set(relative(root, file), out);
  }
  return graph;
}

/** The circles: each a sorted list of the files in one strongly connected component (Tarjan). */
export function circles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || graph.get(v)?.has(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

if (import.meta.main) {
  const found = circles(importGraph(join(import.meta.dir, "../..")));
  for (const c of found) console.log(`${c.length} files: ${c.join(" ")}`);
  console.log(`${found.length} circle(s)`);
}
