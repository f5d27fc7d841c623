// HTTP of people: password sign-in and sign-out (the session cookie), the first owner's setup link and
// invitation links (a small HTML form each, or a JSON POST), and the tenant's members for admins.
import { Elysia } from "elysia";
import { Forbidden } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import { jsonParser, readLimited } from "../http/body";
import { publicUrlFor } from "../http/public-url";
import { parseWith } from "../http/validate";
import { authenticateRequest, authPlugin, requireScope, type Auth } from "../tenancy/auth";
import { SESSION_ABSOLUTE_MS, SESSION_COOKIE, sessionCookie } from "../tenancy/session";
import { AcceptBody, InviteBody, SetRoleBody, SetupBody, SignInBody } from "./model";
import { acceptInvitation, completeSetup, describeLink, invite, listUsers, removeMember, setRole, signIn, signOut, signOutEverywhere, type PeopleDeps } from "./service";

const FORM_LIMIT = 64 * 1024;

/** JSON, or an HTML form's urlencoded fields (the setup and invitation pages post those). */
const jsonOrForm = async ({ request }: { request: Request }): Promise<unknown> => {
  const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  if (type === "application/x-www-form-urlencoded") {
    return Object.fromEntries(new URLSearchParams(new TextDecoder().decode(await readLimited(request, FORM_LIMIT))));
  }
  return jsonParser(FORM_LIMIT)({ request });
};

const isForm = (request: Request) => request.headers.get("content-type")?.toLowerCase().startsWith("application/x-www-form-urlencoded") ?? false;

function escape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A small page: no script, no outside resources. */
function page(title: string, body: string, status = 200): Response {
  return new Response(
    `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escape(title)}</title></head><body><main><h1>${escape(title)}</h1>${body}</main></body></html>`,
    {
      status,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
        "referrer-policy": "no-referrer",
        "cache-control": "no-store",
      },
    },
  );
}

const field = (name: string, label: string, type = "text", extra = "") => `<p><label>${label}<br><input name="${name}" type="${type}" ${extra}></label></p>`;

/** Whether the cookie must carry `Secure`: the request came over https, or --public-url is https. */
function secure(ctx: AutomationContext, request: Request): boolean {
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]!.trim().toLowerCase() === "https";
  return forwarded || publicUrlFor(ctx, request).startsWith("https:") || ctx.config.publicUrl.startsWith("https:") || new URL(request.url).protocol === "https:";
}

function cookieHeader(ctx: AutomationContext, request: Request, value: string, maxAgeS: number): string {
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeS}${secure(ctx, request) ? "; Secure" : ""}`;
}

function personOf(auth: Auth): NonNullable<Auth["person"]> {
  if (!auth.person) throw Forbidden("this is for signed-in people, not API keys", { code: "not_a_session" });
  return auth.person;
}

export const peopleRoutes = (ctx: AutomationContext) => {
  const deps: PeopleDeps = { people: ctx.storage.people, tenancy: ctx.storage.tenancy, clock: ctx.clock };
  const signInParse = jsonParser(FORM_LIMIT);
  const authedParse = jsonParser(FORM_LIMIT, (request) => authenticateRequest(ctx, request));
  return (
    new Elysia()
      .post(
        "/auth/sessions",
        async ({ body, request, server, set }) => {
          const b = parseWith(SignInBody, body);
          // A session id the browser brings along is never kept: sign-in ends it and mints a new one.
          let previous: string | undefined;
          try {
            previous = sessionCookie(request.headers.get("cookie"));
          } catch {
            previous = undefined;
          }
          const address = server?.requestIP(request)?.address ?? "unknown";
          const { cookie, info } = await signIn(deps, b, address, previous);
          set.status = 201;
          set.headers["set-cookie"] = cookieHeader(ctx, request, cookie, SESSION_ABSOLUTE_MS / 1000);
          set.headers["cache-control"] = "no-store";
          return info;
        },
        { parse: signInParse, detail: { summary: "Sign in with e-mail and password (sets the session cookie)", tags: ["People"], security: [] } },
      )
      .get(
        "/auth/setup",
        async ({ query }) => {
          const token = typeof query.token === "string" ? query.token : "";
          try {
            const link = await describeLink(deps, token);
            if (link.kind !== "setup") throw new Error("not a setup link");
          } catch {
            return page("Setup link not valid", "<p>This setup link is unknown, used or expired. Restart the server to print a new one while it has no users.</p>", 404);
          }
          return page(
            "Create the first owner",
            `<form method="post" action="setup"><input type="hidden" name="token" value="${escape(token)}">${field("email", "E-mail", "email", "required")}${field("name", "Name", "text", "required")}${field("password", "Password (12 characters or more)", "password", 'required minlength="12"')}${field("tenantName", "Tenant name", "text", 'value="default"')}<p><button>Create owner</button></p></form>`,
          );
        },
        { detail: { hide: true } },
      )
      .post(
        "/auth/setup",
        async ({ body, request, set }) => {
          const out = await completeSetup(deps, parseWith(SetupBody, body));
          if (isForm(request)) return page("Owner created", `<p>${escape(out.user.email)} owns tenant ${escape(out.tenant.slug)}. <a href="/">Sign in</a>.</p>`, 201);
          set.status = 201;
          return out;
        },
        { parse: jsonOrForm, detail: { summary: "Create the first owner with the one-time setup link's token", tags: ["People"], security: [] } },
      )
      .get(
        "/auth/invitations/accept",
        async ({ query }) => {
          const token = typeof query.token === "string" ? query.token : "";
          let email = "";
          try {
            const link = await describeLink(deps, token);
            if (link.kind !== "invite") throw new Error("not an invitation");
            email = link.email ?? "";
          } catch {
            return page("Invitation not valid", "<p>This invitation is unknown, used or expired. Ask an admin for a new one.</p>", 404);
          }
          return page(
            "Accept the invitation",
            `<p>For ${escape(email)}.</p><form method="post" action="accept"><input type="hidden" name="token" value="${escape(token)}">${field("name", "Name", "text", "required")}${field("password", "Password (12 characters or more)", "password", 'required minlength="12"')}<p><button>Join</button></p></form>`,
          );
        },
        { detail: { hide: true } },
      )
      .post(
        "/auth/invitations/accept",
        async ({ body, request, set }) => {
          const out = await acceptInvitation(deps, parseWith(AcceptBody, body));
          if (isForm(request)) return page("Welcome", `<p>${escape(out.user.email)} joined ${escape(out.tenant.slug)} as ${out.role}. <a href="/">Sign in</a>.</p>`, 201);
          set.status = 201;
          return out;
        },
        { parse: jsonOrForm, detail: { summary: "Accept an invitation with its one-time token", tags: ["People"], security: [] } },
      )
      .use(authPlugin(ctx))
      .delete(
        "/auth/sessions/current",
        async ({ auth, request, set }) => {
          await signOut(deps, personOf(auth).sessionId);
          set.headers["set-cookie"] = cookieHeader(ctx, request, "", 0);
          set.status = 204;
        },
        { detail: { summary: "Sign out (this session)", tags: ["People"] } },
      )
      .delete(
        "/auth/sessions",
        async ({ auth, request, set }) => {
          const ended = await signOutEverywhere(deps, personOf(auth).userId);
          set.headers["set-cookie"] = cookieHeader(ctx, request, "", 0);
          return { ended };
        },
        { detail: { summary: "Sign out everywhere (every session of this person)", tags: ["People"] } },
      )
      .get(
        "/members",
        async ({ auth }) => {
          requireScope(auth, "members:read");
          const users = await listUsers(deps, auth.tenantId);
          return { data: users.map((u) => ({ ...u, role: u.memberships.find((m) => m.tenantId === auth.tenantId)?.role ?? null, memberships: undefined })) };
        },
        { detail: { summary: "The tenant's members", tags: ["People"] } },
      )
      .post(
        "/members/invitations",
        async ({ auth, body, request, set }) => {
          requireScope(auth, "members:write");
          const b = parseWith(InviteBody, body);
          if (b.role === "owner" && !auth.scopes.includes("*")) throw Forbidden("only an owner invites an owner", { code: "insufficient_scope" });
          const out = await invite(deps, { email: b.email, role: b.role, tenant: auth.tenantId });
          set.status = 201;
          set.headers["cache-control"] = "no-store";
          // The link is shown once: only its hash is kept.
          return { id: out.id, email: b.email, role: b.role, expiresAt: out.expiresAt, link: `${publicUrlFor(ctx, request)}/v1/auth/invitations/accept?token=${out.token}` };
        },
        { parse: authedParse, detail: { summary: "Invite a person to this tenant (a one-time link, 7 days, shown once)", tags: ["People"] } },
      )
      .put(
        "/members/:userId",
        async ({ auth, params, body }) => {
          requireScope(auth, "members:write");
          const { role } = parseWith(SetRoleBody, body);
          // Only an owner makes or changes owners: an admin cannot raise anyone (or themself) above admin.
          const u = await setRole(deps, params.userId, auth.tenantId, role, { membersOnly: true, mayTouchOwners: auth.scopes.includes("*") });
          return { ...u, role };
        },
        { parse: authedParse, detail: { summary: "Set a member's role", tags: ["People"] } },
      )
      .delete(
        "/members/:userId",
        async ({ auth, params, set }) => {
          requireScope(auth, "members:write");
          await removeMember(deps, params.userId, auth.tenantId, { mayTouchOwners: auth.scopes.includes("*") });
          set.status = 204;
        },
        { detail: { summary: "Remove a member (their sessions in this tenant end)", tags: ["People"] } },
      )
  );
};
