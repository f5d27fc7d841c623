// HTTP of people: password sign-in (with the TOTP second factor) and sign-out (the session cookie), the
// first owner's setup link, invitation and password reset links (a small HTML form each, or a JSON POST),
// single-use sign-in codes (the demo's link), enrolling a second factor, the tenant's people settings,
// and the tenant's members for admins.
import { Elysia } from "elysia";
import { DomainError, Forbidden } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import { jsonParser, readLimited } from "../http/body";
import { publicUrlFor } from "../http/public-url";
import { parseWith } from "../http/validate";
import { noteAudit } from "../audit/http";
import { authenticateRequest, authPlugin, requireScope, type Auth } from "../tenancy/auth";
import { SESSION_ABSOLUTE_MS, SESSION_COOKIE, sessionCookie } from "../tenancy/session";
import { currentSession, endMySession, mySessions, noteClient } from "./sessions";
import { AcceptBody, InviteBody, ResetBody, SetRoleBody, SetupBody, SignInBody, SignInCode, TenantSettingsBody, TotpCodeBody } from "./model";
import {
  acceptInvitation,
  completeSetup,
  describeLink,
  invite,
  listUsers,
  redeemSignInCode,
  removeMember,
  resetLink,
  resetPassword,
  setRole,
  signIn,
  signOut,
  signOutEverywhere,
  type PeopleDeps,
} from "./service";
import { confirmTotp, disableTotp, enrollTotp, totpStatus } from "./totp";

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
export function secure(ctx: AutomationContext, request: Request): boolean {
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]!.trim().toLowerCase() === "https";
  return forwarded || publicUrlFor(ctx.config, request).startsWith("https:") || ctx.config.publicUrl.startsWith("https:") || new URL(request.url).protocol === "https:";
}

/** The session cookie as every sign-in sets it (and sign-out clears it, with an empty value and 0). */
export function cookieHeader(ctx: AutomationContext, request: Request, value: string, maxAgeS: number): string {
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeS}${secure(ctx, request) ? "; Secure" : ""}`;
}

function personOf(auth: Auth): NonNullable<Auth["person"]> {
  if (!auth.person) throw Forbidden("this is for signed-in people, not API keys", { code: "not_a_session" });
  return auth.person;
}

export const peopleRoutes = (ctx: AutomationContext) => {
  const deps: PeopleDeps = { people: ctx.storage.people, tenancy: ctx.storage.tenancy, clock: ctx.clock, secretKey: ctx.config.secretKey };
  /** A session id the browser brings along: never kept, sign-in ends it and mints a new one. */
  const previousSession = (request: Request): string | undefined => {
    try {
      return sessionCookie(request.headers.get("cookie"));
    } catch {
      return undefined;
    }
  };
  const signInParse = jsonParser(FORM_LIMIT);
  const authedParse = jsonParser(FORM_LIMIT, (request) => authenticateRequest(ctx, request));
  return (
    new Elysia()
      .post(
        "/auth/sessions",
        async ({ body, request, server, set }) => {
          const b = parseWith(SignInBody, body);
          // A session id the browser brings along is never kept: sign-in ends it and mints a new one.
          const previous = previousSession(request);
          const address = server?.requestIP(request)?.address ?? "unknown";
          // The audit trail: an attempt is the attempted e-mail's until it succeeds, then the user's.
          noteAudit(request, { actor: { type: "anonymous", id: null, name: b.email.trim() }, email: b.email.trim() });
          const { cookie, info } = await signIn(deps, b, address, previous);
          await noteClient(deps, cookie, request.headers.get("user-agent"), address === "unknown" ? null : address);
          noteAudit(request, { tenantId: info.tenant.id, actor: { type: "user", id: info.user.id, name: info.user.email } });
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
      .get(
        "/auth/code",
        async ({ query, request }) => {
          // A GET that signs in: the demo's link is opened from a terminal. The code works once and for 10
          // minutes, so the address a browser keeps in its history signs nobody in later.
          try {
            const code = parseWith(SignInCode, typeof query.code === "string" ? query.code : "", "code");
            // Recorded as any sign-in is; a refused link is recorded anonymous (the catch below).
            noteAudit(request, { actor: { type: "anonymous", id: null, name: null } });
            const { cookie, info } = await redeemSignInCode(deps, code, previousSession(request));
            noteAudit(request, { tenantId: info.tenant.id, actor: { type: "user", id: info.user.id, name: info.user.email } });
            return new Response(null, {
              status: 303,
              headers: { location: "/", "set-cookie": cookieHeader(ctx, request, cookie, SESSION_ABSOLUTE_MS / 1000), "cache-control": "no-store", "referrer-policy": "no-referrer" },
            });
          } catch (err) {
            if (!(err instanceof DomainError)) throw err;
            const why =
              err.code === "link_used"
                ? "This sign-in link was already used: it works once. Start the server again for a new one, or sign in with a password."
                : err.code === "link_expired"
                  ? "This sign-in link has expired (it works for 10 minutes). Start the server again for a new one, or sign in with a password."
                  : err.kind === "unauthorized"
                    ? "This sign-in link's user is disabled or no longer a member."
                    : "This sign-in link is unknown: check it was copied whole.";
            return page("Sign-in link not valid", `<p>${escape(why)}</p><p><a href="/">Sign in</a></p>`, err.status);
          }
        },
        // A page for browsers (its refusals are HTML, not the envelope), hidden like the setup and invitation pages.
        { detail: { hide: true } },
      )
      .get(
        "/auth/reset",
        async ({ query }) => {
          const token = typeof query.token === "string" ? query.token : "";
          let email = "";
          try {
            const link = await describeLink(deps, token);
            if (link.kind !== "reset") throw new Error("not a reset link");
            email = link.email ?? "";
          } catch {
            return page("Reset link not valid", "<p>This password reset link is unknown, used or expired. Ask an admin for a new one.</p>", 404);
          }
          return page(
            "Choose a new password",
            `<p>For ${escape(email)}. Every session of this account ends.</p><form method="post" action="reset"><input type="hidden" name="token" value="${escape(token)}">${field("password", "New password (12 characters or more)", "password", 'required minlength="12" autocomplete="new-password"')}<p><button>Set password</button></p></form>`,
          );
        },
        { detail: { hide: true } },
      )
      .post(
        "/auth/reset",
        async ({ body, request }) => {
          const out = await resetPassword(deps, parseWith(ResetBody, body));
          if (isForm(request)) return page("Password changed", `<p>The password of ${escape(out.user.email)} is changed. <a href="/">Sign in</a>.</p>`);
          return out;
        },
        { parse: jsonOrForm, detail: { summary: "Set a new password with a one-time reset link's token (ends every session of the user)", tags: ["People"], security: [] } },
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
      .get("/auth/sessions", async ({ auth }) => ({ data: await mySessions(deps, auth) }), {
        detail: { summary: "My sessions: the signed-in person's live sessions, newest first (people only, not API keys)", tags: ["People"] },
      })
      .get("/auth/sessions/current", ({ auth, set }) => {
        set.headers["cache-control"] = "no-store";
        return currentSession(auth);
      }, { detail: { summary: "The current session: user, tenant, role, scopes and the CSRF token (people only)", tags: ["People"] } })
      .delete(
        "/auth/sessions/:id",
        async ({ auth, params, set }) => {
          await endMySession(deps, auth, params.id);
          set.status = 204;
        },
        { detail: { summary: "End one of my sessions (another person's is a 404)", tags: ["People"] } },
      )
      .get(
        "/auth/totp",
        async ({ auth }) => totpStatus(deps, personOf(auth).userId, auth.tenantId),
        { detail: { summary: "Whether this person has a second factor (TOTP), one pending, and whether the tenant requires one", tags: ["People"] } },
      )
      .post(
        "/auth/totp/enroll",
        async ({ auth, set }) => {
          const p = personOf(auth);
          set.headers["cache-control"] = "no-store";
          return enrollTotp(deps, { id: p.userId, email: p.email });
        },
        { detail: { summary: "Enroll a TOTP second factor: {secret, uri} for the authenticator app, pending until confirmed", tags: ["People"] } },
      )
      .post(
        "/auth/totp/confirm",
        async ({ auth, body }) => {
          const p = personOf(auth);
          await confirmTotp(deps, p.userId, parseWith(TotpCodeBody, body).code);
          return totpStatus(deps, p.userId, auth.tenantId);
        },
        { parse: authedParse, detail: { summary: "Confirm the enrolled second factor with a current code (then sign-in asks for one)", tags: ["People"] } },
      )
      .delete(
        "/auth/totp",
        async ({ auth, body }) => {
          const p = personOf(auth);
          await disableTotp(deps, p.userId, parseWith(TotpCodeBody, body).code);
          return totpStatus(deps, p.userId, auth.tenantId);
        },
        { parse: authedParse, detail: { summary: "Remove the second factor, with a current code", tags: ["People"] } },
      )
      .get(
        "/tenant/settings",
        async ({ auth }) => {
          requireScope(auth, "members:read");
          return deps.people.tenantSettings(auth.tenantId);
        },
        { detail: { summary: "The tenant's people settings (requireTotp)", tags: ["People"] } },
      )
      .put(
        "/tenant/settings",
        async ({ auth, body }) => {
          // Tenant settings are the owner's: no role but owner holds `tenant:write` (only `*` grants it).
          requireScope(auth, "tenant:write");
          const b = parseWith(TenantSettingsBody, body);
          await deps.people.setTenantSettings(auth.tenantId, b, ctx.clock.now().toISOString());
          return deps.people.tenantSettings(auth.tenantId);
        },
        { parse: authedParse, detail: { summary: "Set the tenant's people settings (owners): requireTotp", tags: ["People"] } },
      )
      .post(
        "/members/:userId/reset-link",
        async ({ auth, params, request, set }) => {
          requireScope(auth, "members:write");
          const out = await resetLink(deps, params.userId, { tenantId: auth.tenantId, mayTouchOwners: auth.scopes.includes("*") });
          set.status = 201;
          set.headers["cache-control"] = "no-store";
          // Shown once: only its hash is kept.
          return { id: out.id, userId: out.userId, email: out.email, expiresAt: out.expiresAt, link: `${publicUrlFor(ctx.config, request)}/v1/auth/reset?token=${out.token}` };
        },
        { detail: { summary: "Make a one-time password reset link for a member (1 hour, shown once)", tags: ["People"] } },
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
          return { id: out.id, email: b.email, role: b.role, expiresAt: out.expiresAt, link: `${publicUrlFor(ctx.config, request)}/v1/auth/invitations/accept?token=${out.token}` };
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
