import { Invalid, TooLarge } from "../kernel/errors";

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
  try {
    return decode(text, request.headers.get("content-type") ?? "");
  } catch {
    throw Invalid("Malformed request body: not valid JSON or form data");
  }
}

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
