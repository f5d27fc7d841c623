import { TooLarge } from "../kernel/errors";

const tooLarge = (limit: number, length?: number) =>
  TooLarge(length === undefined ? `Request body is over the limit of ${limit} bytes` : `Request body is ${length} bytes; the limit is ${limit}`);

/**
 * The body-size rule for the parse hook. A declared Content-Length over the limit is refused before
 * anything is read; a body without one (chunked) is read up to the limit and parsed here, so both get
 * the same 413. Returns undefined to let Elysia's own parser handle everything else.
 */
export async function limitedBody(request: Request, contentType: string, limit: number): Promise<unknown> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > limit) throw tooLarge(limit, Number(declared));
    return undefined;
  }
  if (!request.body) return undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks));
  if (contentType.startsWith("application/json")) return text === "" ? undefined : JSON.parse(text);
  if (contentType.startsWith("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(text));
  return text;
}
