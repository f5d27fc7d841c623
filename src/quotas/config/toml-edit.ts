// A minimal format-preserving TOML patcher: sets one array-of-strings key in one table and leaves every
// other byte (comments, blank lines, order, quoting) as the user wrote it. The caller re-parses the
// result to prove the edit did what was asked.

interface Entry {
  table: string[];
  key: string[];
  start: number; // first line
  end: number; // last line
  valueCol: number; // column on `start` where the value begins
}

interface Header {
  line: number;
  path: string[];
}

/** Reads a dotted key (`a."b.c".'d'`) starting at `pos`; null when there is none. */
function readKey(s: string, pos: number): { keys: string[]; end: number } | null {
  const keys: string[] = [];
  let i = pos;
  for (;;) {
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] === '"') {
      let j = i + 1;
      while (j < s.length && s[j] !== '"') j += s[j] === "\\" ? 2 : 1;
      if (j >= s.length) return null;
      try {
        keys.push(JSON.parse(s.slice(i, j + 1)));
      } catch {
        return null;
      }
      i = j + 1;
    } else if (s[i] === "'") {
      const j = s.indexOf("'", i + 1);
      if (j === -1) return null;
      keys.push(s.slice(i + 1, j));
      i = j + 1;
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(s.slice(i));
      if (!m) return null;
      keys.push(m[0]);
      i += m[0].length;
    }
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] !== ".") return { keys, end: i };
    i++;
  }
}

/** Bracket depth after scanning `s` from `pos`, and where a comment starts (outside strings). */
function scan(s: string, pos: number, depth: number): { depth: number; comment: number } {
  for (let i = pos; i < s.length; i++) {
    const c = s[i];
    if (c === "#") return { depth, comment: i };
    if (c === '"') {
      i++;
      while (i < s.length && s[i] !== '"') i += s[i] === "\\" ? 2 : 1;
    } else if (c === "'") {
      const j = s.indexOf("'", i + 1);
      i = j === -1 ? s.length : j;
    } else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") depth--;
  }
  return { depth, comment: -1 };
}

function index(lines: string[]): { headers: Header[]; entries: Entry[] } {
  const headers: Header[] = [];
  const entries: Entry[] = [];
  let table: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const t = line.trimStart();
    if (t === "" || t.startsWith("#")) continue;
    if (t.startsWith("[")) {
      const arrayTable = t.startsWith("[[");
      const k = readKey(t, arrayTable ? 2 : 1);
      if (k) {
        table = arrayTable ? ["\u0000array", ...k.keys] : k.keys;
        if (!arrayTable) headers.push({ line: i, path: k.keys });
      }
      continue;
    }
    const k = readKey(line, 0);
    if (!k || line[k.end] !== "=") continue;
    const valueCol = k.end + 1;
    let { depth } = scan(line, valueCol, 0);
    let end = i;
    while (depth > 0 && end + 1 < lines.length) {
      end++;
      depth = scan(lines[end], 0, depth).depth;
    }
    entries.push({ table, key: k.keys, start: i, end, valueCol });
    i = end;
  }
  return { headers, entries };
}

const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
const keyText = (k: string) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k));
export const arrayText = (values: string[]) => `[${values.map((v) => JSON.stringify(v)).join(", ")}]`;

/** Sets `[table] key = ["..."]`, replacing the value in place, adding the key, or adding the table. */
export function setStringArray(text: string, table: string[], key: string, values: string[]): string {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const lines = text.split(/\r?\n/);
  const { headers, entries } = index(lines);
  const value = arrayText(values);
  const hit = entries.find((e) => same(e.table, table) && same(e.key, [key]));
  if (hit) {
    const first = lines[hit.start];
    const last = lines[hit.end];
    // Keep whatever follows the old value on its last line (a trailing comment and its spacing).
    const lastFrom = hit.start === hit.end ? hit.valueCol : 0;
    const c = scan(last, lastFrom, hit.start === hit.end ? 0 : 1).comment;
    let tail = "";
    if (c !== -1) {
      let ws = c;
      while (ws > lastFrom && (last[ws - 1] === " " || last[ws - 1] === "\t")) ws--;
      tail = last.slice(ws);
    }
    const lead = first.slice(0, hit.valueCol).replace(/=\s*$/, "= ").replace(/=$/, "= ");
    lines.splice(hit.start, hit.end - hit.start + 1, `${lead}${value}${tail}`);
    return lines.join(eol);
  }
  const header = headers.find((h) => same(h.path, table));
  if (header) {
    const inTable = entries.filter((e) => same(e.table, table) && e.start > header.line);
    const after = inTable.length ? Math.max(...inTable.map((e) => e.end)) : header.line;
    lines.splice(after + 1, 0, `${keyText(key)} = ${value}`);
    return lines.join(eol);
  }
  const out = [...lines];
  while (out.length && out[out.length - 1].trim() === "") out.pop();
  if (out.length) out.push("");
  out.push(`[${table.map(keyText).join(".")}]`, `${keyText(key)} = ${value}`, "");
  return out.join(eol);
}
