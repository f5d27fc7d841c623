// Wire shapes and limits of e-mail servers and of the messages `action.email` sends.
import * as v from "valibot";
import { pageQuery } from "../http/validate";

export const MAX_RECIPIENTS = 10;
export const MAX_TEXT_BYTES = 50 * 1024;
export const MAX_ATTACHMENTS = 10;
export const MAX_ATTACHMENT_BYTES = 12 * 1024 * 1024;
export const SECURITIES = ["starttls", "tls", "none"] as const;
export const DEFAULT_PORTS: Record<(typeof SECURITIES)[number], number> = { starttls: 587, tls: 465, none: 25 };

export const Email = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(254),
  v.regex(/^[^\s@<>(),;:"\\]+@[^\s@<>(),;:"\\]+\.[^\s@<>(),;:"\\]+$/, "must be an e-mail address"),
);
const name = v.pipe(v.string(), v.trim(), v.minLength(1, "name must not be empty"), v.maxLength(100));
const fromName = v.nullish(v.pipe(v.string(), v.maxLength(100), v.regex(/^[^\r\n<>"]*$/, "must not contain line breaks, <, > or quotes")));
const host = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(253), v.regex(/^[A-Za-z0-9.:[\]-]+$/, "must be a host name or IP address"));
const port = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535));
const secret = v.pipe(v.string(), v.minLength(1), v.maxLength(1000));
const pem = v.pipe(v.string(), v.maxLength(64 * 1024), v.includes("-----BEGIN CERTIFICATE-----", "must be a PEM certificate"));
const username = v.pipe(v.string(), v.minLength(1), v.maxLength(320));

const common = { name, fromEmail: Email, fromName, enabled: v.optional(v.boolean()) };
const resend = { transport: v.literal("resend"), apiKey: v.optional(secret) };
const smtp = {
  transport: v.literal("smtp"),
  host,
  port: v.optional(port),
  security: v.optional(v.picklist(SECURITIES)),
  username: v.nullish(username),
  password: v.nullish(secret),
  caPem: v.nullish(pem),
};

export const CreateServerBody = v.variant("transport", [v.strictObject({ ...common, ...resend }), v.strictObject({ ...common, ...smtp })]);
export type CreateServer = v.InferOutput<typeof CreateServerBody>;

/** Metadata-only, or metadata plus a full transport (`transport` and its fields). */
export const PatchServerBody = v.strictObject({
  name: v.optional(name),
  fromEmail: v.optional(Email),
  fromName,
  enabled: v.optional(v.boolean()),
  transport: v.optional(v.picklist(["resend", "smtp"])),
  apiKey: v.optional(secret),
  host: v.optional(host),
  port: v.optional(port),
  security: v.optional(v.picklist(SECURITIES)),
  username: v.nullish(username),
  password: v.nullish(secret),
  caPem: v.nullish(pem),
});
export type PatchServer = v.InferOutput<typeof PatchServerBody>;
export const TRANSPORT_FIELDS = ["apiKey", "host", "port", "security", "username", "password", "caPem"] as const;

export const TestBody = v.strictObject({ to: Email });
export const ListServersQuery = v.object(pageQuery);

/** An e-mail server as the API shows it (never a secret: only whether one is configured). */
interface ServerBase {
  id: string;
  name: string;
  enabled: boolean;
  fromEmail: string;
  fromName: string | null;
  createdAt: string;
  updatedAt: string;
}

export type ServerView =
  | (ServerBase & { transport: "resend"; apiKeyConfigured: boolean })
  | (ServerBase & { transport: "smtp"; host: string; port: number; security: "starttls" | "tls" | "none"; username: string | null; passwordConfigured: boolean; caPemConfigured: boolean });
