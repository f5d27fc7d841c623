// The role → scope table: a person's role in a tenant grants exactly these API-key scopes, so one
// check (`requireScope` over `auth.scopes`) decides for keys and sessions alike. docs/automation/people.md
// prints this table; test/automation/people/matrix.test.ts holds every route to it.
import { ROLES, type Role } from "../people/store";

const VIEWER = ["automations:read", "runs:read", "files:read", "reviews:read", "templates:read"];
const REVIEWER = [...VIEWER, "reviews:write", "datasets:write"];
const DEVELOPER = ["automations:*", "runs:*", "files:*", "reviews:*", "datasets:*", "templates:*", "email:read"];
const ADMIN = [...DEVELOPER, "email:*", "members:*", "keys:*", "audit:read"];

/** What each role may do, in the scopes API keys carry (`*` = everything, including tenant settings). */
export const ROLE_SCOPES: Record<Role, readonly string[]> = {
  owner: ["*"],
  admin: ADMIN,
  developer: DEVELOPER,
  reviewer: REVIEWER,
  viewer: VIEWER,
};

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
