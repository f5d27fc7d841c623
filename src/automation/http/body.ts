// JSON request bodies: read with a byte cap (413 past it, even without Content-Length), only as JSON
// (415 for other content types), malformed JSON is a 400. An empty body reads as {}.
import { Invalid, TooLarge } from "../../kernel/errors";
import { jsonMayHoldUnstorable, unstorableField, unstorableMessage } from "../../kernel/text";
import { HttpRefusal } from "./envelope";

export const DEFAULT_JSON_LIMIT = 4 * 1024 * 1024;

export async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function tooLarge(maxBytes: number) {
  return TooLarge(`request body is larger than ${maxBytes} bytes`, { code: "payload_too_large" });
}

export function isJsonType(contentType: string | null): boolean {
  if (!contentType) return false;
  const mime = contentType.split(";")[0].trim().toLowerCase();
  return mime === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(mime);
}

/**
 * An Elysia `parse` hook for JSON-only routes. Bodies are parsed before `resolve` runs, so `before`
 * (e.g. the API key check) runs first: an anonymous caller gets a 401, not a 400 about its body,
 * and never makes the server read a large body.
 */
export const jsonParser =
  (maxBytes = DEFAULT_JSON_LIMIT, before?: (request: Request) => unknown) =>
  async ({ request }: { request: Request }): Promise<unknown> => {
    await before?.(request);
    const type = request.headers.get("content-type");
    const unsupported = () => new HttpRefusal(415, `expected Content-Type application/json, got ${type ?? "none"}`, "unsupported_media_type");
    // A declared non-empty body of another type is refused before reading it; an empty one reads as {}.
    const declared = request.headers.get("content-length");
    if (!isJsonType(type) && declared !== null && declared !== "0") throw unsupported();
    const bytes = await readLimited(request, maxBytes);
    const text = new TextDecoder().decode(bytes);
    if (text.trim() === "") return {};
    if (!isJsonType(type)) throw unsupported();
    return parseJsonText(text);
  };

/**
 * JSON.parse for request bodies (and JSON-valued form fields, `field` naming them): malformed JSON is a
 * 400 `invalid_json`, and a string PostgreSQL cannot store (NUL, a lone surrogate; keys too) a 400
 * `invalid_text` naming its path. Every JSON body of the API is parsed here.
 */
export function parseJsonText(text: string, field?: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw Invalid(`malformed JSON ${field ?? "body"}: ${(err as Error).message}`, { code: "invalid_json", ...(field ? { field } : {}) });
  }
  if (jsonMayHoldUnstorable(text)) refuseUnstorable(value, field);
  return value;
}

/** A 400 `invalid_text` naming the first string of `value` (a parameter, a form field, a parsed body) PostgreSQL cannot store. */
export function refuseUnstorable(value: unknown, prefix?: string): void {
  const field = unstorableField(value, prefix);
  if (field !== undefined) throw Invalid(unstorableMessage(field), { field, code: "invalid_text" });
}
