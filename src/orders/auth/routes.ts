import { Elysia } from "elysia";
import { DomainError } from "../../kernel/errors";
import type { AuthService } from "./service";
import type { TokenRequest } from "./model";

const FIELDS = ["client_id", "client_secret", "grant_type", "username", "password"] as const;

/** POST /oauth/token: parameters from the query string and/or a form body, client from HTTP Basic too. */
export const authRoutes = (auth: AuthService) =>
  new Elysia({ name: "orders.auth" }).post("/oauth/token", async ({ query, body, request, set }) => {
    const req: TokenRequest = {};
    const form = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    for (const field of FIELDS) {
      const value = pick(field, form[field]) ?? pick(field, (query as Record<string, unknown>)[field]);
      if (value !== undefined) req[field] = value;
    }
    const basic = basicCredentials(request.headers.get("authorization"));
    if (basic) {
      req.client_id = basic.id;
      req.client_secret = basic.secret;
    }
    const token = await auth.issueToken(req);
    set.headers["cache-control"] = "no-store";
    set.headers.pragma = "no-cache";
    return token;
  });

function pick(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  throw new DomainError("invalid", `Parameter ${field} must be given once, as text`, { code: "invalid_request", field });
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
