// Request generation for the fuzz suites: every operation of an OpenAPI document, with valid and
// hostile values (boundary and huge numbers, wrong types, unknown fields, unicode and NUL, deep nesting,
// oversized bodies and headers, broken JSON and multipart, path traversal in path parameters,
// injection in query parameters). Seeded by FUZZ_SEED so a failure replays exactly.
import fc from "fast-check";

// biome-ignore lint: JSON Schema is any-shaped
type Schema = Record<string, any>;

export interface Operation {
  method: string;
  /** Template, e.g. `/v1/runs/{id}` or `/v1/runs/{id}/artifacts/*`. */
  path: string;
  query: { name: string; schema: Schema }[];
  body?: { type: string; schema: Schema };
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array | FormData;
  /** What was sent, for the failure report. */
  describe: string;
}

/** The operations of an OpenAPI 3 document. */
export function operationsOf(doc: { paths: Record<string, Record<string, Schema>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const query = ((op.parameters ?? []) as Schema[]).filter((p) => p.in === "query").map((p) => ({ name: p.name as string, schema: (p.schema ?? {}) as Schema }));
      const content = op.requestBody?.content as Record<string, { schema?: Schema }> | undefined;
      const type = content ? Object.keys(content)[0] : undefined;
      ops.push({ method: method.toUpperCase(), path, query, ...(type ? { body: { type, schema: content![type].schema ?? {} } } : {}) });
    }
  }
  return ops;
}

/** Strings an attacker tries first. */
export const HOSTILE = [
  "", " ", "0", "-1", "1e309", "NaN", "Infinity", "null", "true", "[]", "{}", "%", "%zz", "%00", "\u0000", "a\u0000b",
  "../../../../etc/passwd", "..%2f..%2fetc%2fpasswd", "%2e%2e%2f%2e%2e%2f", "....//....//", "..\\..\\windows", "/etc/passwd",
  "' OR '1'='1", "1; DROP TABLE users; --", "createdAt desc, (SELECT 1)", "name) UNION SELECT * FROM api_keys --", "$where", "__proto__",
  "constructor", "😀👍🏽", "\u202eevil", "\uD800", "Ω≈ç√", "<script>alert(1)</script>", "{{ 7*7 }}", "${7*7}", "9".repeat(400), "a".repeat(5000),
];

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
);

const numbers = fc.oneof(
  fc.constantFrom(0, -1, 1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e20, -1e20, Number.MAX_SAFE_INTEGER + 2, -(2 ** 63), 1e308, 1.5, -0),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const anyJson = fc.jsonValue({ maxDepth: 3 });

/** A value for `schema`: mostly of its type (with boundaries), sometimes of another type or an unknown field. */
function valueFor(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(anyJson, numbers, hostileString);
  if (depth > 4) return wrong;
  const variants: fc.Arbitrary<unknown>[] = [];
  if (schema.enum) variants.push(fc.constantFrom(...(schema.enum as unknown[])));
  for (const alt of (schema.anyOf ?? schema.oneOf ?? []) as Schema[]) variants.push(valueFor(alt, depth + 1));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === "string") variants.push(hostileString, fc.string({ maxLength: 20 }));
  if (type === "integer" || type === "number") variants.push(numbers);
  if (type === "boolean") variants.push(fc.boolean());
  if (type === "null") variants.push(fc.constant(null));
  if (type === "array") variants.push(fc.array(valueFor((schema.items ?? {}) as Schema, depth + 1), { maxLength: 4 }));
  if (type === "object" || schema.properties) {
    const props = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [k, s] of props) record[k] = valueFor(s, depth + 1);
    variants.push(
      fc.tuple(fc.record(record, { requiredKeys: (schema.required ?? []) as string[] }), fc.option(fc.dictionary(hostileString, anyJson, { maxKeys: 2 }), { freq: 4 })).map(([o, extra]) => ({ ...(extra ?? {}), ...o })),
    );
  }
  if (variants.length === 0) variants.push(anyJson);
  return fc.oneof({ weight: 6, arbitrary: fc.oneof(...variants) }, { weight: 1, arbitrary: wrong });
}

/** A lone surrogate cannot be encoded: send the bytes a broken client would (an invalid UTF-8 escape). */
const encode = (f: (s: string) => string, v: string) => {
  try {
    return f(v);
  } catch {
    return "%ED%A0%80";
  }
};

const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;

/** Bodies that are not what any schema wants. */
const junkBody = fc.oneof(
  fc.constantFrom("{", "[1,", '{"a":}', "null", "\u0000\u0001", "{}".repeat(10), deep(10_000), `{"a":${"9".repeat(5000)}}`, '{"__proto__":{"admin":true}}'),
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.constant("x".repeat(3 * 1024 * 1024)),
);

/** A multipart body: the fields the route knows or not, files with hostile names, sometimes a ZIP from `zips`. */
function multipart(zips: Uint8Array[]): fc.Arbitrary<FormData | string> {
  const part = fc.tuple(fc.constantFrom("file", "purpose", "mode", "target", "input", "metadata", "files.doc", "x"), hostileString, fc.option(fc.constantFrom(...zips.map((_, i) => i)), { freq: 2 }));
  const form = fc.array(part, { minLength: 0, maxLength: 3 }).map((parts) => {
    const fd = new FormData();
    for (const [name, value, zip] of parts) {
      if (zip !== null && zips.length > 0) fd.append(name, new File([zips[zip]], "archive.zip", { type: "application/zip" }));
      else if (name === "file" || name.startsWith("files.")) fd.append(name, new File([value], value || "f.txt"));
      else fd.append(name, value);
    }
    return fd;
  });
  const broken = fc.constantFrom("--xyz\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nno end", "--xyz--", "garbage", "--xyz\r\n\r\n\r\n--xyz--\r\n");
  return fc.oneof({ weight: 3, arbitrary: form }, { weight: 1, arbitrary: broken });
}

export interface Context {
  /** Valid values for path parameters (ids of this tenant and of another, to try crossing over). */
  ids: string[];
  /** Authorization header values to try: a valid key, another tenant's, garbage; undefined = none. */
  auth: (string | undefined)[];
  /** ZIPs for multipart parts (zip-slip, a bomb...). */
  zips: Uint8Array[];
}

/** One request for one of `ops`. */
export function requestArb(ops: Operation[], ctx: Context): fc.Arbitrary<FuzzRequest> {
  const pathValue = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ctx.ids) }, { weight: 2, arbitrary: hostileString });
  return fc.constantFrom(...ops).chain((op) => {
    const names = [...op.path.matchAll(/\{([^}]+)\}|\*/g)].map((m) => m[1] ?? "*");
    // Mostly encoded as a client library would; sometimes raw, so `../` reaches the router as segments.
    const params = fc.array(fc.tuple(pathValue, fc.boolean()), { minLength: names.length, maxLength: names.length });
    const query = fc.array(fc.tuple(op.query.length > 0 ? fc.oneof(fc.constantFrom(...op.query), fc.constant({ name: "sort", schema: {} }), fc.constant({ name: "filter", schema: {} })) : fc.constant({ name: "sort", schema: {} }), fc.boolean()), { maxLength: 3 }).chain((qs) =>
      qs.length === 0 ? fc.constant([] as [string, string][]) : fc.tuple(...qs.map(([q, valid]) => (valid ? valueFor(q.schema) : hostileString).map((v) => [q.name, typeof v === "string" ? v : JSON.stringify(v)] as [string, string]))),
    );
    const body: fc.Arbitrary<{ body?: string | FormData; type?: string }> = op.body
      ? op.body.type.startsWith("multipart/")
        ? multipart(ctx.zips).map((b) => (typeof b === "string" ? { body: b, type: "multipart/form-data; boundary=xyz" } : { body: b }))
        : fc.oneof(
            { weight: 4, arbitrary: valueFor(op.body.schema).map((v) => ({ body: JSON.stringify(v) ?? "null", type: "application/json" })) },
            { weight: 1, arbitrary: junkBody.map((b) => ({ body: b, type: "application/json" })) },
            { weight: 1, arbitrary: fc.tuple(junkBody, fc.constantFrom("text/plain", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data", "")).map(([b, t]) => ({ body: b, type: t })) },
          )
      : fc.oneof({ weight: 5, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: junkBody.map((b) => ({ body: b, type: "application/json" })) });
    const headers = fc.record({
      auth: fc.constantFrom(...ctx.auth),
      big: fc.option(fc.constantFrom("x".repeat(8 * 1024), "\u00e9".repeat(100)), { freq: 10 }),
      requestId: fc.option(hostileString.filter((s) => /^[\x20-\x7e]*$/.test(s)), { freq: 5 }),
    });
    return fc.tuple(params, query, body, headers).map(([ps, qs, b, h]) => {
      let i = 0;
      const path = op.path.replace(/\{[^}]+\}|\*/g, () => {
        const [value, raw] = ps[i++];
        return raw ? encode(encodeURI, value).replace(/[?#]/g, encodeURIComponent) : encode(encodeURIComponent, value);
      });
      const search = qs.length ? `?${qs.map(([k, v]) => `${encode(encodeURIComponent, k)}=${encode(encodeURIComponent, v)}`).join("&")}` : "";
      const hs: Record<string, string> = {};
      if (h.auth !== undefined) hs.authorization = h.auth;
      if (b.type) hs["content-type"] = b.type;
      if (h.big !== null) hs["x-padding"] = h.big.replace(/[^\x20-\x7e]/g, "e");
      if (h.requestId !== null) hs["x-request-id"] = h.requestId;
      const method = op.method;
      const body = method === "GET" || method === "DELETE" ? undefined : b.body;
      const shown = typeof body === "string" ? JSON.stringify(body.slice(0, 200)) + (body.length > 200 ? `…(${body.length})` : "") : body ? "<multipart>" : "";
      return { method, url: `${path}${search}`, headers: hs, ...(body !== undefined ? { body } : {}), describe: `${method} ${path}${search} auth=${(h.auth ?? "none").slice(0, 20)} ${shown}` };
    });
  });
}

/** FUZZ_SEED (to replay) or a fresh seed, printed either way; FUZZ_RUNS overrides `runs`. */
export function fuzzParams(name: string, runs: number): { seed: number; numRuns: number } {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 2 ** 31)) | 0;
  const numRuns = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : runs;
  console.log(`[fuzz] ${name}: seed ${seed}, ${numRuns} cases (replay: FUZZ_SEED=${seed})`);
  return { seed, numRuns };
}
