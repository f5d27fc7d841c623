// Flags of the inbound SMTP receiver (`serve --smtp-port 2525 --mail-domain automations.example.com`).
import { readFileSync } from "node:fs";
import type { FlagSpec } from "../../kernel/config";
import { UsageError } from "../../kernel/errors";

export const smtpFlags = {
  "smtp-port": {
    type: "number",
    env: "AUTOMATION_SMTP_PORT",
    value: "PORT",
    help: "receive e-mail that starts runs on this SMTP port (0: a free one, printed and written to --ready-file); needs --mail-domain",
  },
  "mail-domain": {
    type: "string",
    env: "AUTOMATION_MAIL_DOMAIN",
    value: "DOMAIN",
    help: "domain of the automations' inbound addresses (<automation>.<token>@DOMAIN); its MX points at the SMTP port",
  },
  "smtp-max-size": {
    type: "string",
    env: "AUTOMATION_SMTP_MAX_SIZE",
    default: "25MiB",
    value: "SIZE",
    help: "largest message accepted (bytes, or with KiB/MiB); over it 552",
  },
  "smtp-rate-limit": {
    type: "number",
    env: "AUTOMATION_SMTP_RATE_LIMIT",
    default: 60,
    value: "N",
    help: "messages per envelope sender per minute; over it 451, try later (0 = no limit)",
  },
  "smtp-tls-cert": { type: "string", env: "AUTOMATION_SMTP_TLS_CERT", value: "FILE", help: "PEM certificate (chain) offered by STARTTLS; with --smtp-tls-key" },
  "smtp-tls-key": { type: "string", env: "AUTOMATION_SMTP_TLS_KEY", value: "FILE", help: "PEM private key of --smtp-tls-cert" },
} satisfies Record<string, FlagSpec>;

export interface SmtpConfig {
  port: number;
  /** Bytes; a larger message is answered 552 and not stored. */
  maxSize: number;
  /** Messages per envelope sender per minute; 0 = no limit. */
  rateLimit: number;
  /** PEM key and certificate for STARTTLS; absent = STARTTLS not offered. */
  tls?: { key: string; cert: string };
}

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** `1048576`, `512KiB`, `25MiB`, `1GiB` (K/KB/M/MB are read as 1024-based too) → bytes. */
export function parseSize(raw: string, flag: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?\s*$/i.exec(raw);
  if (!m) throw new UsageError(`--${flag} must be a size such as 10MiB or 1048576 (got ${raw})`);
  const unit = (m[2] ?? "b").toLowerCase()[0];
  return Math.floor(Number(m[1]) * { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[unit as "b"]);
}

function readPem(file: string, flag: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read --${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

type SmtpValues = {
  "smtp-port"?: number;
  "mail-domain"?: string;
  "smtp-max-size": string;
  "smtp-rate-limit": number;
  "smtp-tls-cert"?: string;
  "smtp-tls-key"?: string;
};

/** The receiver's config (undefined without --smtp-port) and the mail domain, checked. */
export function smtpConfig(v: SmtpValues): { mailDomain?: string; smtp?: SmtpConfig } {
  const mailDomain = v["mail-domain"]?.trim().toLowerCase().replace(/\.$/, "") || undefined;
  if (mailDomain !== undefined && !DOMAIN.test(mailDomain)) throw new UsageError(`--mail-domain must be a domain such as automations.example.com (got ${v["mail-domain"]})`);
  const port = v["smtp-port"];
  if (port === undefined) return mailDomain ? { mailDomain } : {};
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--smtp-port must be 0-65535 (got ${port})`);
  if (!mailDomain) throw new UsageError("--smtp-port needs --mail-domain (the domain of the inbound addresses)");
  const maxSize = parseSize(v["smtp-max-size"], "smtp-max-size");
  if (maxSize < 1024 || maxSize > 100 * 1024 ** 2) throw new UsageError(`--smtp-max-size must be 1KiB-100MiB (got ${v["smtp-max-size"]})`);
  const rateLimit = v["smtp-rate-limit"];
  if (!Number.isInteger(rateLimit) || rateLimit < 0 || rateLimit > 1_000_000) throw new UsageError(`--smtp-rate-limit must be 0-1000000 (got ${rateLimit})`);
  const certFile = v["smtp-tls-cert"];
  const keyFile = v["smtp-tls-key"];
  if ((certFile === undefined) !== (keyFile === undefined)) throw new UsageError("--smtp-tls-cert and --smtp-tls-key go together");
  const tls = certFile && keyFile ? { cert: readPem(certFile, "smtp-tls-cert"), key: readPem(keyFile, "smtp-tls-key") } : undefined;
  return { mailDomain, smtp: { port, maxSize, rateLimit, ...(tls ? { tls } : {}) } };
}
