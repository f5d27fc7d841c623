// The two ways a message leaves: SMTP through nodemailer (STARTTLS, implicit TLS or plain, AUTH,
// a private CA) and Resend's HTTP API. Failures become a generic category; the caller logs the code.
// The SMTP host is resolved and checked first (src/automation/http/outbound.ts: no internal address
// without --outbound-allow) and nodemailer connects to the checked address, the TLS name being the host's.
import { isIP } from "node:net";
import nodemailer from "nodemailer";
import { resolveAllowed, ResolveFailed } from "../http/outbound";
import type { MailMessage } from "../engine/contract";

/** The step's message once its server is resolved: the server's sender instead of the server's name. */
export interface Outgoing extends Omit<MailMessage, "server"> {
  from: { email: string; name: string | null };
}

export interface SmtpSettings {
  host: string;
  port: number;
  security: "starttls" | "tls" | "none";
  username: string | null;
  password: string | null;
  caPem: string | null;
}

/** A send that failed; `message` is safe to show (no credentials, no recipient), `code` is for logs. */
export class SendFailed extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
    this.name = "SendFailed";
  }
}

const TIMEOUT_MS = 20_000;

/** What every failure before a conversation with an SMTP server says: a closed port, a silent one, one
 * that drops the connection or speaks something else, a name that does not resolve all look alike, so
 * the test send cannot be used to map which ports of a network answer. The code goes to the log. */
export const UNREACHABLE = "could not deliver through the SMTP server";

function smtpFailure(err: unknown): SendFailed {
  const e = err as { code?: string; responseCode?: number; command?: string };
  const code = e.code ?? "EUNKNOWN";
  const message = (err as Error).message ?? "";
  if (code === "EAUTH" || code === "ENOAUTH") return new SendFailed("the SMTP server refused the credentials", code);
  // STARTTLS comes after the greeting; a certificate that does not verify needs a TLS server.
  if (code === "ETLS" || /certificate|self.signed/i.test(message)) return new SendFailed("the TLS handshake with the SMTP server failed", code);
  if (code === "EENVELOPE" || code === "EMESSAGE" || (e.responseCode ?? 0) >= 500) return new SendFailed("the SMTP server refused the message", `${code}:${e.responseCode ?? ""}`);
  return new SendFailed(UNREACHABLE, code);
}

/** Throws OutboundRefused (before any connection) when the host is internal and not allowed. */
export async function sendSmtp(s: SmtpSettings, m: Outgoing, outboundAllow: readonly string[] = []): Promise<string> {
  let address: string;
  try {
    address = await resolveAllowed(s.host, outboundAllow);
  } catch (err) {
    if (err instanceof ResolveFailed) throw new SendFailed(UNREACHABLE, `EDNS:${err.code}`);
    throw err;
  }
  const name = s.host.replace(/^\[|\]$/g, "");
  const servername = isIP(name) ? undefined : name;
  const transport = nodemailer.createTransport({
    host: address,
    port: s.port,
    ...(servername ? { servername } : {}),
    secure: s.security === "tls",
    requireTLS: s.security === "starttls",
    ignoreTLS: s.security === "none",
    auth: s.username && s.password ? { user: s.username, pass: s.password } : undefined,
    tls: s.caPem || servername ? { ...(s.caPem ? { ca: [s.caPem] } : {}), ...(servername ? { servername } : {}) } : undefined,
    connectionTimeout: TIMEOUT_MS,
    greetingTimeout: TIMEOUT_MS,
    socketTimeout: TIMEOUT_MS,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  try {
    const info = await transport.sendMail({
      from: m.from.name ? { name: m.from.name, address: m.from.email } : m.from.email,
      to: m.to,
      cc: m.cc.length ? m.cc : undefined,
      bcc: m.bcc.length ? m.bcc : undefined,
      replyTo: m.replyTo,
      subject: m.subject,
      text: m.text,
      attachments: m.attachments.map((a) => ({ filename: a.filename, content: Buffer.from(a.bytes), contentType: a.contentType })),
    });
    return info.messageId;
  } catch (err) {
    throw smtpFailure(err);
  } finally {
    transport.close();
  }
}

export async function sendResend(baseUrl: string, apiKey: string, m: Outgoing): Promise<string> {
  const body = {
    from: m.from.name ? `${m.from.name} <${m.from.email}>` : m.from.email,
    to: m.to,
    ...(m.cc.length ? { cc: m.cc } : {}),
    ...(m.bcc.length ? { bcc: m.bcc } : {}),
    ...(m.replyTo ? { reply_to: m.replyTo } : {}),
    subject: m.subject,
    text: m.text,
    ...(m.attachments.length
      ? { attachments: m.attachments.map((a) => ({ filename: a.filename, content: Buffer.from(a.bytes).toString("base64"), content_type: a.contentType })) }
      : {}),
  };
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/emails`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "user-agent": "automation-server" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new SendFailed("could not connect to the Resend API", (err as Error).name);
  }
  const text = await res.text();
  if (res.status === 401 || res.status === 403) throw new SendFailed("the Resend API refused the API key", `http_${res.status}`);
  if (!res.ok) throw new SendFailed("the Resend API refused the message", `http_${res.status}`);
  try {
    const id = (JSON.parse(text) as { id?: unknown }).id;
    if (typeof id === "string" && id !== "") return id;
  } catch {
    // fall through
  }
  throw new SendFailed("the Resend API answered without a message id", "no_id");
}
