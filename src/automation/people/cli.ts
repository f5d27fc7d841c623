// `users create|list|disable|enable|set-role|invite|reset-link|reset-totp|link-sso`: flags (or prompts in a terminal), --json output.
// Passwords never ride on the command line (shell history, `ps`): prompted in a terminal, or read from
// stdin with --password-stdin.
import * as p from "@clack/prompts";
import { systemClock } from "../../kernel/clock";
import { helpText, parseFlags } from "../../kernel/config";
import { FatalError, NotFound, UsageError } from "../../kernel/errors";
import { askText, asCliError, interactive, openAdminStorage, printJson } from "../admin";
import { storageFlags } from "../config";
import { allowSsoLink, createUser, invite, listUsers, resetLink, setRole, setStatus, type PeopleDeps } from "./service";
import { resetTotp } from "./totp";
import type { UserInfo } from "./model";

const common = {
  ...storageFlags,
  json: { type: "boolean", help: "print one JSON object" },
  help: { type: "boolean", short: "h", help: "show this help" },
} as const;

const createFlags = {
  email: { type: "string", value: "EMAIL", help: "the user's e-mail (unique, any case)" },
  name: { type: "string", value: "NAME", help: "display name" },
  tenant: { type: "string", value: "SLUG", help: "with --role: make the user a member of this tenant" },
  role: { type: "string", value: "ROLE", help: "owner, admin, developer, reviewer or viewer" },
  "password-stdin": { type: "boolean", help: "read the password from stdin (else prompted in a terminal; without one the user signs in after an invitation)" },
  ...common,
} as const;
const listFlags = { tenant: { type: "string", value: "SLUG", help: "only this tenant's members" }, ...common } as const;
const userFlags = { ...common } as const;
const roleFlags = { tenant: createFlags.tenant, role: createFlags.role, ...common } as const;
const inviteFlags = {
  tenant: createFlags.tenant,
  role: createFlags.role,
  "public-url": { type: "string", env: "AUTOMATION_PUBLIC_URL", value: "URL", help: "the server's address, the base of the link (default http://localhost:8081)" },
  ...common,
} as const;
const resetFlags = { "public-url": inviteFlags["public-url"], ...common } as const;
const linkFlags = {
  issuer: { type: "string", env: "AUTOMATION_OIDC_ISSUER", value: "URL", help: "the provider's issuer, as the server's --oidc-issuer names it" },
  ...common,
} as const;

const USAGE = `Usage: automation-server users create --email EMAIL --name NAME [--tenant SLUG --role ROLE] [--password-stdin] [--json]
       automation-server users list [--tenant SLUG] [--json]
       automation-server users disable USER [--json]      (USER: id or e-mail; ends their sessions at once)
       automation-server users enable USER [--json]
       automation-server users set-role USER --tenant SLUG --role ROLE [--json]
       automation-server users invite EMAIL --role ROLE --tenant SLUG [--public-url URL] [--json]
       automation-server users reset-link USER [--public-url URL] [--json]   (a one-time password reset link, 1 hour)
       automation-server users reset-totp USER [--json]   (removes a lost second factor)
       automation-server users link-sso USER --issuer URL [--json]   (the next SSO sign-in with USER's e-mail becomes USER)

People who sign in to the API and the console. Roles: owner, admin, developer, reviewer, viewer
(docs/automation/people.md). An invitation is a one-time link that works for 7 days.`;

export async function usersCommand(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) {
    process.stdout.write(helpText(USAGE, common));
    if (sub === undefined) throw new UsageError("missing subcommand: users create|list|disable|enable|set-role|invite|reset-link|reset-totp|link-sso");
    return;
  }
  switch (sub) {
    case "create":
      return create(rest);
    case "list":
      return list(rest);
    case "disable":
    case "enable":
      return status(rest, sub);
    case "set-role":
      return role(rest);
    case "invite":
      return inviteCommand(rest);
    case "reset-link":
      return resetLinkCommand(rest);
    case "reset-totp":
      return resetTotpCommand(rest);
    case "link-sso":
      return linkSsoCommand(rest);
    default:
      throw new UsageError(`unknown command "users ${sub}"`);
  }
}

async function withPeople<T>(values: { "data-dir": string; db?: string }, body: (d: PeopleDeps) => Promise<T>): Promise<T> {
  const db = await openAdminStorage(values);
  try {
    return await body({ people: db.storage.people, tenancy: db.storage.tenancy, clock: systemClock });
  } catch (err) {
    return asCliError(err);
  } finally {
    await db.close();
  }
}

function line(u: UserInfo): string {
  return `${u.id}  ${u.email}  ${u.name}  ${u.status}  ${u.memberships.map((m) => `${m.tenantId}:${m.role}`).join(",") || "no tenant"}\n`;
}

async function readPassword(fromStdin: boolean | undefined): Promise<string | undefined> {
  if (fromStdin) return (await Bun.stdin.text()).replace(/\r?\n$/, "");
  if (!interactive()) return undefined;
  const answer = await p.password({ message: "Password (12 characters or more; empty: none yet)" });
  if (p.isCancel(answer)) throw new FatalError("cancelled");
  return String(answer) || undefined;
}

async function create(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, createFlags);
  if (values.help) return void process.stdout.write(helpText("Usage: automation-server users create --email EMAIL --name NAME [--tenant SLUG --role ROLE] [--password-stdin] [--json]\n\nCreates a user.", createFlags));
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if ((values.tenant === undefined) !== (values.role === undefined)) throw new UsageError("--tenant and --role go together");
  const email = values.email ?? (await askText("email", "E-mail"));
  const name = values.name ?? (await askText("name", "Name"));
  const password = await readPassword(values["password-stdin"]);
  const u = await withPeople(values, (d) => createUser(d, { email, name, password, tenant: values.tenant, role: values.role }));
  if (values.json) return printJson(u);
  process.stdout.write(`created user ${u.email} (${u.id})${u.memberships.length ? ` as ${u.memberships[0]!.role} of ${values.tenant}` : ""}\n`);
}

async function list(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, listFlags);
  if (values.help) return void process.stdout.write(helpText("Usage: automation-server users list [--tenant SLUG] [--json]\n\nLists users and their roles (never passwords).", listFlags));
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const users = await withPeople(values, (d) => listUsers(d, values.tenant));
  if (values.json) return printJson({ users });
  if (!users.length) return void process.stdout.write("no users\n");
  for (const u of users) process.stdout.write(line(u));
}

async function status(argv: string[], sub: "disable" | "enable"): Promise<void> {
  const { values, positionals } = parseFlags(argv, userFlags);
  if (values.help) return void process.stdout.write(helpText(`Usage: automation-server users ${sub} USER [--json]\n\n${sub === "disable" ? "Disables a user: their sessions end at once, on every instance." : "Enables a disabled user."}`, userFlags));
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const ref = positionals[0] ?? (await askText("USER", "User id or e-mail"));
  const u = await withPeople(values, (d) => setStatus(d, ref, sub === "disable" ? "disabled" : "active"));
  if (values.json) return printJson(u);
  process.stdout.write(`${u.email} is ${u.status}\n`);
}

async function role(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, roleFlags);
  if (values.help) return void process.stdout.write(helpText("Usage: automation-server users set-role USER --tenant SLUG --role ROLE [--json]\n\nSets (or adds) the user's role in the tenant.", roleFlags));
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const ref = positionals[0] ?? (await askText("USER", "User id or e-mail"));
  const tenant = values.tenant ?? (await askText("tenant", "Tenant slug"));
  const r = values.role ?? (await askText("role", "Role", "reviewer"));
  const u = await withPeople(values, (d) => setRole(d, ref, tenant, r));
  if (values.json) return printJson(u);
  process.stdout.write(`${u.email} is ${r} of ${tenant}\n`);
}

async function inviteCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, inviteFlags);
  if (values.help) return void process.stdout.write(helpText("Usage: automation-server users invite EMAIL --role ROLE --tenant SLUG [--public-url URL] [--json]\n\nMakes a one-time invitation link (7 days), shown once.", inviteFlags));
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const email = positionals[0] ?? (await askText("EMAIL", "E-mail to invite"));
  const tenant = values.tenant ?? (await askText("tenant", "Tenant slug"));
  const r = values.role ?? (await askText("role", "Role", "reviewer"));
  const out = await withPeople(values, (d) => invite(d, { email, role: r, tenant }));
  const base = (values["public-url"] ?? "http://localhost:8081").replace(/\/+$/, "");
  const link = `${base}/v1/auth/invitations/accept?token=${out.token}`;
  if (values.json) return printJson({ id: out.id, email, role: r, tenantId: out.tenantId, expiresAt: out.expiresAt, token: out.token, link });
  process.stdout.write(`invitation for ${email} as ${r} of ${tenant}, one use, until ${out.expiresAt}; shown only once:\n\n  ${link}\n\n`);
}

async function resetLinkCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, resetFlags);
  if (values.help) return void process.stdout.write(helpText("Usage: automation-server users reset-link USER [--public-url URL] [--json]\n\nMakes a one-time password reset link (1 hour), shown once. Using it sets a new password and ends\nevery session of the user. USER: id or e-mail.", resetFlags));
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const ref = positionals[0] ?? (await askText("USER", "User id or e-mail"));
  const out = await withPeople(values, (d) => resetLink(d, ref));
  const base = (values["public-url"] ?? "http://localhost:8081").replace(/\/+$/, "");
  const link = `${base}/v1/auth/reset?token=${out.token}`;
  if (values.json) return printJson({ id: out.id, userId: out.userId, email: out.email, expiresAt: out.expiresAt, token: out.token, link });
  process.stdout.write(`password reset for ${out.email}, one use, until ${out.expiresAt}; shown only once:\n\n  ${link}\n\n`);
}

async function resetTotpCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, userFlags);
  if (values.help) return void process.stdout.write(helpText("Usage: automation-server users reset-totp USER [--json]\n\nRemoves the user's second factor (a lost phone); they sign in with the password alone and may enroll\nagain (at once, when their tenant requires one).", userFlags));
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const ref = positionals[0] ?? (await askText("USER", "User id or e-mail"));
  const u = await withPeople(values, async (d) => {
    const found = await d.people.findUser(ref);
    if (!found) throw NotFound(`no user "${ref}"`, { field: "user" });
    await resetTotp(d, found.id);
    return found;
  });
  if (values.json) return printJson({ userId: u.id, email: u.email, totp: false });
  process.stdout.write(`${u.email} has no second factor now\n`);
}

async function linkSsoCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseFlags(argv, linkFlags);
  if (values.help) {
    return void process.stdout.write(
      helpText(
        "Usage: automation-server users link-sso USER --issuer URL [--json]\n\nLets the next single sign-on through the issuer with USER's e-mail (verified there) become USER,\nonce, within 7 days: without it (or --oidc-trust-email on the server) such a sign-in is refused.\nUSER: id or e-mail.",
        linkFlags,
      ),
    );
  }
  if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"`);
  const ref = positionals[0] ?? (await askText("USER", "User id or e-mail"));
  const issuer = values.issuer ?? (await askText("issuer", "Issuer URL"));
  if (!/^https?:\/\/\S+$/.test(issuer)) throw new UsageError(`--issuer must be the provider's issuer URL (got ${issuer})`);
  const out = await withPeople(values, (d) => allowSsoLink(d, ref, issuer.trim()));
  if (values.json) return printJson(out);
  process.stdout.write(`the next sign-in of ${out.email} through ${out.issuer} becomes this user (once, until ${out.expiresAt})\n`);
}
