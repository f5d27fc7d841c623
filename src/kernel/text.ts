// Text PostgreSQL cannot store: NUL (text, json and jsonb refuse it: `invalid byte sequence for encoding
// "UTF8": 0x00`, `unsupported Unicode escape sequence`) and lone UTF-16 surrogates (not encodable as
// UTF-8; the driver would replace them silently). Both servers refuse such input at the edge with a 400
// naming the field, on SQLite too, so the answer does not depend on the backend (issue 36 part 4).

/** True when `s` holds a NUL or a lone surrogate. */
export const unstorable = (s: string): boolean => s.includes("\0") || !s.isWellFormed();

/**
 * Cheap pre-test on JSON text: once decoded from UTF-8, a JSON text can only put NUL or a lone surrogate
 * into a parsed string through a `\u` escape (raw control characters are invalid JSON), so when this is
 * false no walk of the parsed value is needed.
 */
export const jsonMayHoldUnstorable = (text: string): boolean => text.includes("\\u") && /\\u(?:0000|[dD][89a-fA-F])/.test(text);

/**
 * The dotted path (`input.name`, `items.2`) of the first string in `value` that is `unstorable`, a key
 * or a value; a bad key is blamed on the object holding it (its name is not echoed back). `prefix` names
 * `value` itself; undefined when everything is storable. Iterative: a 10,000-deep array is fine.
 */
export function unstorableField(value: unknown, prefix = ""): string | undefined {
  const stack: [unknown, string][] = [[value, prefix]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      if (unstorable(v)) return path || "<root>";
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], path ? `${path}.${i}` : String(i)]);
      continue;
    }
    const keys = Object.keys(v);
    for (const k of keys) if (unstorable(k)) return path || "<root>";
    for (let i = keys.length - 1; i >= 0; i--) stack.push([(v as Record<string, unknown>)[keys[i]], path ? `${path}.${keys[i]}` : keys[i]]);
  }
  return undefined;
}

/** The message both servers give for a refused field. */
export const unstorableMessage = (field: string): string =>
  `${field} contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored`;
