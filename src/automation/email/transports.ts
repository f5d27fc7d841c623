// The two ways a message leaves: SMTP through nodemailer (STARTTLS, implicit TLS or plain, AUTH,
// a private CA) and Resend's HTTP API. Failures become a generic category; the caller logs the code.
import nodemailer from "nodemailer";
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

function smtpFailure(err: unknown): SendFailed {
  const e = err as { code?: string; responseCode?: number };
  const code = e.code ?? "EUNKNOWN";
  if (code === "EAUTH" || code === "ENOAUTH") return new SendFailed("the SMTP server refused the credentials", code);
  if (code === "ETLS" || /certificate|self.signed|TLS|SSL/i.test((err as Error).message ?? "")) return new SendFailed("the TLS handshake with the SMTP server failed", code);
  // A peer that answers nothing (no greeting, no reply to a command or to the message) or drops the
  // connection halfway: say so, rather than blaming the connect.
  if (code === "ETIMEDOUT") return new SendFailed(`the SMTP server did not answer within ${TIMEOUT_MS / 1000} s`, code);
  if (/closed unexpectedly|ECONNRESET|socket hang up/i.test((err as Error).message ?? "")) return new SendFailed("the SMTP server closed the connection before the message was accepted", code);
  if (code === "ECONNECTION" || code === "ESOCKET" || code === "EDNS" || code === "ECONNREFUSED") return new SendFailed("could not connect to the SMTP server", code);
  if (code === "EENVELOPE" || code === "EMESSAGE" || (e.responseCode ?? 0) >= 500) return new SendFailed("the SMTP server refused the message", `${code}:${e.responseCode ?? ""}`);
  return new SendFailed("the message could not be sent", code);
}

export async function sendSmtp(s: SmtpSettings, m: Outgoing): Promise<string> {
  const transport = nodemailer.createTransport({
    host: s.host,
    port: s.port,
    secure: s.security === "tls",
    requireTLS: s.security === "starttls",
    ignoreTLS: s.security === "none",
    auth: s.username && s.password ? { user: s.username, pass: s.password } : undefined,
    tls: s.caPem ? { ca: [s.caPem] } : undefined,
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
