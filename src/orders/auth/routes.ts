import { Elysia } from "elysia";
import { limitedBody } from "../body";
import { DomainError } from "../../kernel/errors";
import type { AuthService } from "./service";
import * as v from "valibot";
import { TokenRequest } from "./model";

/** POST /oauth/token: parameters from the query string and/or a form body, client from HTTP Basic too. */
export const authRoutes = (auth: AuthService, bodyLimit: number) =>
  new Elysia({ name: "orders.auth" })
    // Only requests that carry a body reach the parse hook, so the check costs GETs nothing.
    .onParse(({ request, contentType }) => limitedBody(request, contentType, bodyLimit))
    .post("/oauth/token", async ({ query, body, request, set }) => {
    const form = typeof body === "object" && body !== null && !Array.isArray(body) ? body : {};
    // Form fields win over query parameters; both are outside data and go through the schema.
    const merged: Record<string, unknown> = { ...strip(query), ...strip(form) };
    const basic = basicCredentials(request.headers.get("authorization"));
    if (basic) {
      merged.client_id = basic.id;
      merged.client_secret = basic.secret;
    }
    const parsed = v.safeParse(TokenRequest, merged);
    if (!parsed.success) {
      const issue = parsed.issues[0];
      throw new DomainError("invalid", issue.message, { code: "invalid_request", field: v.getDotPath(issue) ?? undefined });
    }
    const token = await auth.issueToken(parsed.output);
    set.headers["cache-control"] = "no-store";
    set.headers.pragma = "no-cache";
    return token;
  });

/** Drops null/undefined values (absent parameters). */
function strip(o: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, value]) => value !== undefined && value !== null));
}

/** RFC 6749 §2.3.1: id and secret are form-encoded, joined by ":", base64'd. */
function basicCredentials(header: string | null): { id: string; secret: string } | undefined {
  const m = header && /^Basic[ \t]+([A-Za-z0-9+/=]+)[ \t]*$/i.exec(header);
  if (!m) return undefined;
  const text = Buffer.from(m[1], "base64").toString("utf8");
  const at = text.indexOf(":");
  if (at < 0) throw new DomainError("unauthorized", "Client authentication failed: malformed Basic credentials", { code: "invalid_client" });
  return { id: formDecode(text.slice(0, at)), secret: formDecode(text.slice(at + 1)) };
}

function formDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
}
