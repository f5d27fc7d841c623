// Reads workflow YAML into plain JSON while remembering the line of every node, so validation
// issues found later on the plain value can still point at `line N` of the file.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from "yaml";
import type { WorkflowIssue } from "../engine/workflow-types";
import { unstorable, unstorableField, unstorableMessage } from "../../kernel/text";

export interface Source {
  value: unknown;
  /** Line of the node at `path` (dotted), or of its nearest ancestor that has one. */
  lineOf(path: string): number | undefined;
}

/** Nesting deeper than this is refused: no workflow needs it, and the parser and walkers recurse. */
export const MAX_YAML_DEPTH = 100;

const tooDeep = (): { ok: false; issues: WorkflowIssue[] } => ({
  ok: false,
  issues: [{ field: "<root>", message: `invalid YAML: nested deeper than ${MAX_YAML_DEPTH} levels`, code: "invalid_yaml" }],
});

/** True when the text alone shows nesting past the limit: refused at once, no parse (nor thread hop) needed. */
export const nestedTooDeep = (text: string): boolean => nestingBound(text) > MAX_YAML_DEPTH;

const isStackOverflow = (e: unknown) => e instanceof RangeError && /call stack/i.test(e.message);

/**
 * An upper bound of the document's nesting, read from the text in one pass: flow brackets outside
 * quotes, and block indentation levels. The parser needs seconds and the whole stack for a document
 * nested 20,000 deep; this refuses it first.
 */
function nestingBound(text: string): number {
  let flow = 0;
  let deepest = 0;
  let quote = "";
  const indents: number[] = [];
  let lineStart = true;
  let indent = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\n") {
      lineStart = true;
      indent = 0;
      continue;
    }
    if (lineStart) {
      if (c === " " || c === "-") {
        indent++;
        continue;
      }
      lineStart = false;
      if (c !== "#" && c !== "\r") {
        while (indents.length > 0 && indents[indents.length - 1] >= indent) indents.pop();
        indents.push(indent);
        if (indents.length + flow > deepest) deepest = indents.length + flow;
      }
    }
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "[" || c === "{") {
      flow++;
      if (indents.length + flow > deepest) deepest = indents.length + flow;
    } else if ((c === "]" || c === "}") && flow > 0) flow--;
  }
  return deepest;
}

/** What reading YAML gives, as plain values (they cross to and from worker threads): the JSON value and the line of every path ("" is the document's). */
export type PlainRead = { ok: true; value: unknown; lines: Map<string, number> } | { ok: false; issues: WorkflowIssue[] };

/** Documents read on a worker thread ahead of the synchronous parse that needs them (see prepareYaml in offthread.ts); a few at most, each used once. */
const prepared = new Map<string, PlainRead>();
const PREPARED_MAX = 8;

/** Keeps the result of reading `text` elsewhere, for the next `readYaml(text)`. */
export function rememberRead(text: string, read: PlainRead): void {
  if (prepared.size >= PREPARED_MAX) prepared.delete(prepared.keys().next().value!);
  prepared.set(text, read);
}

/** YAML text → its JSON value and a line for every path, or the issues. */
export function readYaml(text: string): { ok: true; source: Source } | { ok: false; issues: WorkflowIssue[] } {
  const done = prepared.get(text);
  if (done) prepared.delete(text);
  const r = done ?? readPlain(text);
  if (!r.ok) return r;
  const { lines } = r;
  const lineOf = (path: string): number | undefined => {
    for (let p = path; ; p = p.includes(".") ? p.slice(0, p.lastIndexOf(".")) : "") {
      const line = lines.get(p);
      if (line !== undefined || p === "") return line;
    }
  };
  return { ok: true, source: { value: r.value, lineOf } };
}

/** The reading itself, with plain results (what a worker thread runs for large documents). */
export function readPlain(text: string): PlainRead {
  if (nestedTooDeep(text)) return tooDeep();
  try {
    return read(text);
  } catch (e) {
    // A document nested thousands deep can exhaust the stack inside the YAML parser itself.
    if (isStackOverflow(e)) return tooDeep();
    throw e;
  }
}

function read(text: string): PlainRead {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.some((e) => /call stack/i.test(e.message))) return tooDeep();
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
  let deepest = 0;
  const walk = (node: unknown, path: string, depth = 1) => {
    if (depth > deepest) deepest = depth;
    if (depth > MAX_YAML_DEPTH) return;
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const p = path ? `${path}.${key}` : key;
        const line = lineAt(pair.key as Node) ?? lineAt(pair.value as Node);
        if (line !== undefined) lines.set(p, line);
        walk(pair.value, p, depth + 1);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const p = path ? `${path}.${i}` : String(i);
        const line = lineAt(item as Node);
        if (line !== undefined) lines.set(p, line);
        walk(item, p, depth + 1);
      });
    }
  };
  walk(doc.contents, "");
  if (deepest > MAX_YAML_DEPTH) return tooDeep();
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { ok: false, issues: [{ field: "<root>", message: `invalid YAML: ${(e as Error).message}`, code: "invalid_yaml" }] };
  }
  const root = lineAt(doc.contents as Node);
  if (root !== undefined) lines.set("", root);
  // A YAML escape (`"\0"`, `"\x00"`, `"\ud800"`) makes text PostgreSQL cannot store out of a request that
  // passed the JSON edge (issue 36 part 4): refused like any other such field, with its line.
  if (text.includes("\\") || unstorable(text)) {
    const field = unstorableField(value);
    if (field !== undefined) {
      const line = lines.get(field === "<root>" ? "" : field);
      return { ok: false, issues: [{ field, message: `${unstorableMessage(field)}${line === undefined ? "" : ` (line ${line})`}`, code: "invalid_text", ...(line === undefined ? {} : { line }) }] };
    }
  }
  return { ok: true, value, lines };
}
