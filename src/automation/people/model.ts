// Wire and input shapes of people: users, roles, sign-in, one-time links.
import * as v from "valibot";
import { ROLES } from "../people/store";

export const Email = v.pipe(
  v.string("email must be a string"),
  v.trim(),
  v.maxLength(254, "email must be at most 254 characters"),
  v.email("email must be an e-mail address"),
);
export const PersonName = v.pipe(v.string("name must be a string"), v.trim(), v.minLength(1, "name is required"), v.maxLength(200));
export const RoleName = v.picklist(ROLES, `role must be one of ${ROLES.join(", ")}`);
/** Checked for length and commonness by passwords.ts; here only its type and a cap on what is read. */
export const Password = v.pipe(v.string("password must be a string"), v.maxLength(1024, "password is too long"));
const Token = v.pipe(v.string("token must be a string"), v.regex(/^[A-Za-z0-9_-]{1,128}$/, "token is malformed"));
const TenantRef = v.pipe(v.string(), v.minLength(1), v.maxLength(100));

/** A TOTP code as people type it: six digits, spaces allowed ("123 456"). */
export const TotpCode = v.pipe(
  v.string("code must be a string"),
  v.maxLength(20, "code is malformed"),
  v.transform((s) => s.replace(/\s+/g, "")),
  v.regex(/^\d{6}$/, "code must be the 6 digits of the authenticator app"),
);
export const SignInBody = v.strictObject({
  email: v.pipe(v.string("email must be a string"), v.maxLength(254)),
  password: Password,
  tenant: v.optional(TenantRef),
  /** The second factor's current code, when the account has one. */
  totp: v.optional(TotpCode),
});
export const TotpCodeBody = v.strictObject({ code: TotpCode });
export const ResetBody = v.strictObject({ token: Token, password: Password });
export const TenantSettingsBody = v.strictObject({ requireTotp: v.boolean("requireTotp must be true or false") });
/** A single-use sign-in code in the address (the demo's link). */
export const SignInCode = Token;
export const SetupBody = v.strictObject({
  token: Token,
  email: Email,
  name: PersonName,
  password: Password,
  tenantName: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200))),
  tenantSlug: v.optional(v.string()),
});
export const AcceptBody = v.strictObject({ token: Token, name: PersonName, password: Password });
export const SetRoleBody = v.strictObject({ role: RoleName });
export const InviteBody = v.strictObject({ email: Email, role: RoleName });

export interface UserInfo {
  id: string;
  email: string;
  name: string;
  status: "active" | "disabled";
  createdAt: string;
  memberships: { tenantId: string; role: string }[];
}

/** What a sign-in answers (beside the cookie): who, where, what the role may do, and the console's CSRF token. */
export interface SessionInfo {
  user: { id: string; email: string; name: string };
  tenant: { id: string; slug: string; name: string };
  role: string;
  scopes: string[];
  csrfToken: string;
  expiresAt: string;
  /** The tenant requires a second factor this person has not confirmed: the session may only enroll one. */
  totpEnrollmentRequired?: true;
}
