// People: password sign-in and the person's sessions (`/v1/auth/sessions`), the tenant's members
// (`/v1/members`) and the audit trail (`/v1/audit`). Sign-in sends no credentials of the client's own:
// it is what makes a session (a browser keeps the cookie the answer sets).
import { enc } from "./files";
import type { Transport } from "./transport";
import type { SessionInfo } from "../people/model";

export type { SessionInfo };

export interface SignInInput {
  email: string;
  password: string;
  /** Tenant id or slug; default the person's first tenant. */
  tenant?: string;
  /** The second factor's current code, when the server answered 401 `totp_required`. */
  totp?: string;
}

/** A single sign-on provider people may sign in with (`GET /v1/auth/providers`); `start` is where a browser goes to begin. */
export interface SignInProvider {
  id: string;
  name: string;
  type: "oidc";
  start: string;
  /** Set for a tenant's own provider (listed when the sign-in page names the tenant). */
  tenant?: string;
}

/** `GET /v1/auth/sessions/current`: the signed-in person, their tenant and role. */
export interface CurrentSession extends SessionInfo {
  id: string;
  createdAt: string;
}

/** One of the person's sessions (`GET /v1/auth/sessions`). */
export interface SessionLine {
  id: string;
  createdAt: string;
  lastSeenAt: string | null;
  expiresAt: string;
  current: boolean;
  userAgent?: string | null;
  address?: string | null;
}

export interface Member {
  id: string;
  email: string;
  name: string;
  status: "active" | "disabled";
  createdAt: string;
  role: string | null;
}

/** An invitation as made: its one-time link is in this answer only. */
export interface Invitation {
  id: string;
  email: string;
  role: string;
  expiresAt: string;
  link: string;
}

/** A password reset link as made: the link is in this answer only (1 hour, once). */
export interface ResetLink {
  id: string;
  userId: string;
  email: string;
  expiresAt: string;
  link: string;
}

/** An admin's leave for a member's account to become their SSO identity. */
export interface SsoLink {
  userId: string;
  email: string;
  provider: string;
  issuer: string;
  expiresAt: string;
}

/** The tenant's people settings. */
export interface TenantPeopleSettings {
  requireTotp: boolean;
}

/** A single sign-on provider the tenant's owner added (`/v1/tenant/sso/providers`); never its secret. */
export interface TenantSsoProvider {
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  scopes: string[];
  groupsClaim: string;
  roleMap: { group: string; role: string }[];
  defaultRole: string | null;
  allowedDomains: string[];
  /** What to register at the provider. */
  redirectUri: string;
  createdAt: string;
}

export interface NewTenantSsoProvider {
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes?: string[];
  groupsClaim?: string;
  roleMap?: { group: string; role: string }[];
  defaultRole?: string;
  allowedDomains?: string[];
}

/** The tenant's single sign-on settings (`/v1/tenant/sso`) and the server's providers. */
export interface TenantSsoSettings {
  /** Members sign in by single sign-on only: their passwords are refused (API keys still work). */
  ssoOnly: boolean;
  /** A local account whose tenants all trust the provider's verified e-mails is linked at its first SSO sign-in. */
  trustEmails: boolean;
  providers: { id: string; name: string }[];
}

export interface Actor {
  type: string;
  id: string;
  name: string | null;
}

export interface AuditEntry {
  id: string;
  at: string;
  actor: Actor;
  action: string;
  resource: { type: string | null; id: string | null } | null;
  requestId: string | null;
  outcome: string;
  status?: number | null;
}

export interface AuditQuery {
  actor?: string;
  action?: string;
  resource?: string;
  since?: string;
  until?: string;
  cursor?: string;
  limit?: number;
}

export interface AuditPage {
  data: AuditEntry[];
  nextCursor?: string | null;
  hasMore?: boolean;
}

/** `GET /v1/auth/totp`: the person's second factor, one enrolled but not confirmed yet, and the tenant's rule. */
export interface SecondFactorStatus {
  enabled: boolean;
  pending: boolean;
  required: boolean;
}

export class AuthSessionsResource {
  constructor(private readonly http: Transport) {}

  /** Signs in with e-mail and password (`POST /v1/auth/sessions`); the answer's cookie is the session. */
  create(input: SignInInput): Promise<SessionInfo> {
    return this.http.json({ method: "POST", path: "/v1/auth/sessions", json: input, auth: false });
  }

  current(): Promise<CurrentSession> {
    return this.http.json({ method: "GET", path: "/v1/auth/sessions/current" });
  }

  /** Where to send the browser to sign out at the SSO provider too (before signOut; null for other sessions). */
  async logoutUrl(): Promise<string | null> {
    return (await this.http.json<{ url: string | null }>({ method: "GET", path: "/v1/auth/oidc/logout-url" })).url;
  }

  /** The single sign-on providers of the server (public: the sign-in page lists them). */
  async providers(tenant?: string): Promise<SignInProvider[]> {
    const path = tenant ? `/v1/auth/providers?tenant=${encodeURIComponent(tenant)}` : "/v1/auth/providers";
    return (await this.http.json<{ data: SignInProvider[] }>({ method: "GET", path, auth: false })).data;
  }

  async list(): Promise<SessionLine[]> {
    return (await this.http.json<{ data: SessionLine[] }>({ method: "GET", path: "/v1/auth/sessions" })).data;
  }

  /** Ends one of the person's sessions. */
  end(id: string): Promise<void> {
    return this.http.json({ method: "DELETE", path: `/v1/auth/sessions/${enc(id)}` });
  }

  /** Signs out (this session). */
  signOut(): Promise<void> {
    return this.http.json({ method: "DELETE", path: "/v1/auth/sessions/current" });
  }

  /** Ends every session of the person. */
  signOutEverywhere(): Promise<{ ended: number }> {
    return this.http.json({ method: "DELETE", path: "/v1/auth/sessions" });
  }

  /** The signed-in person's second factor (TOTP). */
  secondFactor(): Promise<SecondFactorStatus> {
    return this.http.json({ method: "GET", path: "/v1/auth/totp" });
  }

  /** Starts enrolling a TOTP second factor: the secret and its `otpauth://` URI, pending until confirmed. */
  enrollSecondFactor(): Promise<{ secret: string; uri: string }> {
    return this.http.json({ method: "POST", path: "/v1/auth/totp/enroll", json: {} });
  }

  /** Confirms the enrolled factor with a current code; from then on sign-in asks for one. */
  confirmSecondFactor(code: string): Promise<SecondFactorStatus> {
    return this.http.json({ method: "POST", path: "/v1/auth/totp/confirm", json: { code } });
  }

  /** Removes the second factor, with a current code. */
  removeSecondFactor(code: string): Promise<SecondFactorStatus> {
    return this.http.json({ method: "DELETE", path: "/v1/auth/totp", json: { code } });
  }
}

export class MembersResource {
  constructor(private readonly http: Transport) {}

  async list(): Promise<Member[]> {
    return (await this.http.json<{ data: Member[] }>({ method: "GET", path: "/v1/members" })).data;
  }

  invite(input: { email: string; role: string }): Promise<Invitation> {
    return this.http.json({ method: "POST", path: "/v1/members/invitations", json: input });
  }

  setRole(userId: string, role: string): Promise<Member> {
    return this.http.json({ method: "PUT", path: `/v1/members/${enc(userId)}`, json: { role } });
  }

  remove(userId: string): Promise<void> {
    return this.http.json({ method: "DELETE", path: `/v1/members/${enc(userId)}` });
  }

  /** A one-time password reset link for a member (shown once). */
  resetLink(userId: string): Promise<ResetLink> {
    return this.http.json({ method: "POST", path: `/v1/members/${enc(userId)}/reset-link` });
  }

  /**
   * Lets the member's next sign-in through `provider` (with the same e-mail, verified there) become their
   * local account, once, within 7 days (`members:write`; a member of this tenant alone).
   */
  ssoLink(userId: string, provider: string): Promise<SsoLink> {
    return this.http.json({ method: "POST", path: `/v1/members/${enc(userId)}/sso-link`, json: { provider } });
  }

  /** The tenant's people settings (`members:read`). */
  settings(): Promise<TenantPeopleSettings> {
    return this.http.json({ method: "GET", path: "/v1/tenant/settings" });
  }

  /** Sets the tenant's people settings (owners: `tenant:write`). */
  setSettings(settings: TenantPeopleSettings): Promise<TenantPeopleSettings> {
    return this.http.json({ method: "PUT", path: "/v1/tenant/settings", json: settings });
  }

  /** The tenant's single sign-on settings and the server's providers (`members:read`). */
  sso(): Promise<TenantSsoSettings> {
    return this.http.json({ method: "GET", path: "/v1/tenant/sso" });
  }

  /** The single sign-on providers the tenant's owners added (`members:read`). */
  async ssoProviders(): Promise<TenantSsoProvider[]> {
    return (await this.http.json<{ data: TenantSsoProvider[] }>({ method: "GET", path: "/v1/tenant/sso/providers" })).data;
  }

  /** Adds a single sign-on provider for the tenant (owners); its secret is sealed at rest and never shown again. */
  addSsoProvider(provider: NewTenantSsoProvider): Promise<TenantSsoProvider> {
    return this.http.json({ method: "POST", path: "/v1/tenant/sso/providers", json: provider });
  }

  /** Removes one of the tenant's single sign-on providers (owners). */
  removeSsoProvider(id: string): Promise<void> {
    return this.http.json({ method: "DELETE", path: `/v1/tenant/sso/providers/${encodeURIComponent(id)}` });
  }

  /** Sets the tenant's single sign-on settings; a field left out keeps its value (owners: `tenant:write`). */
  setSso(settings: { ssoOnly?: boolean; trustEmails?: boolean }): Promise<TenantSsoSettings> {
    return this.http.json({ method: "PUT", path: "/v1/tenant/sso", json: settings });
  }
}

export class AuditResource {
  constructor(private readonly http: Transport) {}

  /** A page of the audit trail, newest first; `nextCursor` asks for the next. */
  list(query: AuditQuery = {}): Promise<AuditPage> {
    return this.http.json({ method: "GET", path: "/v1/audit", query: { ...query } });
  }
}
