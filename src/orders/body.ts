import { Invalid, TooLarge } from "../kernel/errors";
import { unstorable, unstorableField, unstorableMessage } from "../kernel/text";

const tooLarge = (limit: number, length?: number) =>
  TooLarge(length === undefined ? `Request body is over the limit of ${limit} bytes` : `Request body is ${length} bytes; the limit is ${limit}`);

/**
 * The body-size rule for the public routes' parse hook. A declared Content-Length over the limit is
 * refused before anything is read; a body without one (chunked) is read up to the limit and parsed
 * here, so both get the same 413. Returns undefined to let Elysia's own parser handle everything else.
 */
export async function limitedBody(request: Request, contentType: string, limit: number): Promise<unknown> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > limit) throw tooLarge(limit, Number(declared));
    return undefined;
  }
  if (!request.body) return undefined;
  return decode(await readLimited(request, limit), contentType);
}

/**
 * The body of a protected route, read by its handler once the caller is known: Spring Security
 * refused an unauthenticated request before its body was looked at, so a bad token with a broken body
 * is still a 401, and a route that takes no body never fails on one. Same limit and 413 as above;
 * unparsable JSON is a 400.
 */
export async function readBody(request: Request, limit: number): Promise<unknown> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit, Number(declared));
  if (!request.body) return undefined;
  const text = await readLimited(request, limit);
  let body: unknown;
  try {
    body = decode(text, request.headers.get("content-type") ?? "");
  } catch {
    throw Invalid("Malformed request body: not valid JSON or form data");
  }
  refuseUnstorable(undefined, body);
  return body;
}

/**
 * Text PostgreSQL cannot store (NUL, a lone UTF-16 surrogate) in a query parameter or a body field is a
 * 400 naming it, on both backends (issue 36 part 4: `POST /oauth/token?username=a%00b` reached the
 * advisory-lock query and was a 500). `url` is checked only when it holds `%00`: query decoding never
 * yields a lone surrogate, and path parameters are integers. Called by the app's one transform hook
 * (query and the bodies Elysia parsed) and by readBody (the protected routes' bodies).
 */
export function refuseUnstorable(url: string | undefined, body: unknown): void {
  if (url?.includes("%00")) {
    for (const [name, value] of new URL(url).searchParams) {
      if (unstorable(name) || unstorable(value)) throw unstorableInput(unstorable(name) ? "a query parameter name" : name);
    }
  }
  if (body === undefined || body === null) return;
  const field = typeof body === "object" ? unstorableField(body) : typeof body === "string" && unstorable(body) ? "<body>" : undefined;
  if (field !== undefined) throw unstorableInput(field);
}

const unstorableInput = (field: string) => Invalid(unstorableMessage(field), { field });

async function readLimited(request: Request, limit: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body!) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

function decode(text: string, contentType: string): unknown {
  if (contentType.startsWith("application/json")) return text === "" ? undefined : JSON.parse(text);
  if (contentType.startsWith("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(text));
  return text;
}
