// Reads workflow YAML into plain JSON while remembering the line of every node, so validation
// issues found later on the plain value can still point at `line N` of the file.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from "yaml";
import type { WorkflowIssue } from "./types";

export interface Source {
  value: unknown;
  /** Line of the node at `path` (dotted), or of its nearest ancestor that has one. */
  lineOf(path: string): number | undefined;
}

export function readYaml(text: string): { ok: true; source: Source } | { ok: false; issues: WorkflowIssue[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      issues: doc.errors.map((e) => {
        const line = e.linePos?.[0]?.line ?? lineCounter.linePos(e.pos[0]).line;
        return { field: "<root>", message: `invalid YAML at line ${line}: ${e.message.split("\n")[0]}`, code: "invalid_yaml", line };
      }),
    };
  }
  const lines = new Map<string, number>();
  const lineAt = (n: Node | null | undefined) => (n?.range ? lineCounter.linePos(n.range[0]).line : undefined);
  const walk = (node: unknown, path: string) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const p = path ? `${path}.${key}` : key;
        const line = lineAt(pair.key as Node) ?? lineAt(pair.value as Node);
        if (line !== undefined) lines.set(p, line);
        walk(pair.value, p);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const p = path ? `${path}.${i}` : String(i);
        const line = lineAt(item as Node);
        if (line !== undefined) lines.set(p, line);
        walk(item, p);
      });
    }
  };
  walk(doc.contents, "");
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { ok: false, issues: [{ field: "<root>", message: `invalid YAML: ${(e as Error).message}`, code: "invalid_yaml" }] };
  }
  const lineOf = (path: string): number | undefined => {
    for (let p = path; ; p = p.includes(".") ? p.slice(0, p.lastIndexOf(".")) : "") {
      const line = lines.get(p);
      if (line !== undefined) return line;
      if (p === "") return lineAt(doc.contents as Node);
    }
  };
  return { ok: true, source: { value, lineOf } };
}
