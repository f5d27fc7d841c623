// The rules of e-mail servers: secrets sealed at rest and never shown, unique live names, PATCH as
// metadata-only or a full transport replacement, soft delete, a test send with a generic failure,
// and the sends of `action.email` (once per step execution, never retried automatically).
import { Conflict, Invalid, NotFound } from "../../kernel/errors";
import { newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import type { MailMessage, MailSent } from "../engine/contract";
import { deriveKey, open, seal, SecretUnreadable } from "../secrets";
import { type CreateServer, DEFAULT_PORTS, MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS, MAX_RECIPIENTS, MAX_TEXT_BYTES, type PatchServer, type ServerView, TRANSPORT_FIELDS } from "./model";
import type { EmailServerRow } from "./store";
import { type Outgoing, sendResend, sendSmtp, SendFailed } from "./transports";
import { literalRefusal, OutboundRefused } from "../http/outbound";

export type EmailContext = Pick<AutomationContext, "storage" | "clock" | "log" | "config" | "metrics">;

const keys = new WeakMap<object, Buffer>();
function keyOf(ctx: EmailContext): Buffer {
  let k = keys.get(ctx.config);
  if (!k) {
    if (!ctx.config.secretKey) throw new Error("no secret key configured");
    k = deriveKey(ctx.config.secretKey);
    keys.set(ctx.config, k);
  }
  return k;
}

export function toView(r: EmailServerRow): ServerView {
  const base = { id: r.id, name: r.name, enabled: r.enabled === 1, fromEmail: r.fromEmail, fromName: r.fromName, createdAt: r.createdAt, updatedAt: r.updatedAt };
  if (r.transport === "resend") return { ...base, transport: "resend", apiKeyConfigured: r.secret !== null };
  return {
    ...base,
    transport: "smtp",
    host: r.host ?? "",
    port: r.port ?? 0,
    // Written only through the validated body (starttls, tls or none).
    security: (r.security ?? "starttls") as "starttls" | "tls" | "none",
    username: r.username,
    passwordConfigured: r.secret !== null,
    caPemConfigured: r.caPem !== null,
  };
}

type TransportCols = Pick<EmailServerRow, "transport" | "host" | "port" | "security" | "username" | "caPem"> & { plainSecret: string | null };

/**
 * Checks one transport's settings; `keep` is the stored secret a replacement may reuse. `outboundAllow`
 * is the operator's list of internal addresses a host may be (null: the operator's own seed, unchecked);
 * a host given as an internal IP address is refused here, a name when a message is sent.
 */
function transportCols(t: Pick<PatchServer, (typeof TRANSPORT_FIELDS)[number]> & { transport: "resend" | "smtp" }, keep: string | null, outboundAllow: readonly string[] | null): TransportCols {
  if (t.transport === "resend") {
    for (const f of ["host", "port", "security", "username", "password", "caPem"] as const) {
      if (t[f] !== undefined && t[f] !== null) throw Invalid(`${f} is an SMTP setting; transport resend takes apiKey`, { field: f, code: "invalid_value" });
    }
    const plainSecret = t.apiKey ?? keep;
    if (!plainSecret) throw Invalid("apiKey is required for transport resend", { field: "apiKey", code: "required" });
    return { transport: "resend", host: null, port: null, security: null, username: null, caPem: null, plainSecret };
  }
  if (t.apiKey !== undefined) throw Invalid("apiKey is a Resend setting; transport smtp takes username and password", { field: "apiKey", code: "invalid_value" });
  if (!t.host) throw Invalid("host is required for transport smtp", { field: "host", code: "required" });
  const refused = outboundAllow && literalRefusal(t.host, outboundAllow);
  if (refused) throw hostRefused(new OutboundRefused(t.host, refused));
  const security = t.security ?? "starttls";
  const username = t.username ?? null;
  const password = t.password ?? (username ? keep : null);
  if ((username === null) !== (password === null)) {
    throw Invalid("username and password go together: give both or neither", { field: username ? "password" : "username", code: "required" });
  }
  // A password must never cross the network in clear text.
  if (security === "none" && username) throw Invalid("credentials need security starttls or tls, not none", { field: "security", code: "invalid_value" });
  return { transport: "smtp", host: t.host, port: t.port ?? DEFAULT_PORTS[security], security, username, caPem: t.caPem ?? null, plainSecret: password };
}

const hostRefused = (err: OutboundRefused) => Invalid(err.message, { field: "host", code: "host_not_allowed" });

const nameTaken = (name: string) => Conflict(`an e-mail server named ${name} already exists`, { field: "name", code: "name_taken" });

async function uniqueName(ctx: EmailContext, tenantId: string, name: string, except?: string): Promise<void> {
  if (await ctx.storage.email.nameTaken(tenantId, name, except)) throw nameTaken(name);
}

/** `seed`: the operator's own demo server, whose host is not checked (it is checked when sending). */
export async function createServer(ctx: EmailContext, tenantId: string, body: CreateServer, opts: { seed?: boolean } = {}): Promise<ServerView> {
  await uniqueName(ctx, tenantId, body.name);
  const { plainSecret, ...cols } = transportCols(body, null, opts.seed ? null : (ctx.config.outboundAllow ?? []));
  const id = newId("ems");
  const now = ctx.clock.now().toISOString();
  const row: EmailServerRow = {
    id, tenantId, name: body.name, enabled: body.enabled === false ? 0 : 1, fromEmail: body.fromEmail, fromName: body.fromName ?? null, ...cols,
    secret: plainSecret === null ? null : seal(keyOf(ctx), plainSecret, id), createdAt: now, updatedAt: now, deletedAt: null,
  };
  // The live-name index decides between racing creates.
  if ((await ctx.storage.email.insertServer(row)) === "name_taken") throw nameTaken(body.name);
  return toView(row);
}

async function live(ctx: EmailContext, tenantId: string, id: string): Promise<EmailServerRow> {
  const row = await ctx.storage.email.server(tenantId, id);
  if (!row) throw NotFound(`e-mail server ${id} not found`, { field: "id" });
  return row;
}

export async function getServer(ctx: EmailContext, tenantId: string, id: string): Promise<ServerView> {
  return toView(await live(ctx, tenantId, id));
}

export async function listServers(ctx: EmailContext, tenantId: string, q: { limit: number; offset: number }) {
  const { rows, total } = await ctx.storage.email.listServers(tenantId, q.limit, q.offset);
  return { data: rows.map(toView), total, limit: q.limit, offset: q.offset };
}

/** The stored secret in clear, or a clear 409 when the server's secret key cannot open it. */
function secretOf(ctx: EmailContext, row: EmailServerRow): string | null {
  if (row.secret === null) return null;
  try {
    return open(keyOf(ctx), row.secret, row.id);
  } catch (err) {
    if (!(err instanceof SecretUnreadable)) throw err;
    throw Conflict(
      `the stored ${row.transport === "resend" ? "API key" : "password"} of e-mail server ${row.name} cannot be decrypted with this server's secret key (was --secret-key-file or AUTOMATION_SECRET_KEY changed?); set it again with PATCH`,
      { code: "secret_unreadable" },
    );
  }
}

/**
 * PATCH: metadata (name, fromEmail, fromName, enabled) alone, or with a full transport given by
 * `transport`. A replacement keeps the stored secret only for the same transport and, for SMTP, the
 * same host and username: credentials never silently follow a server to another host or account.
 */
export async function patchServer(ctx: EmailContext, tenantId: string, id: string, body: PatchServer): Promise<ServerView> {
  const row = await live(ctx, tenantId, id);
  const set: Partial<EmailServerRow> = {};
  if (body.name !== undefined && body.name !== row.name) {
    await uniqueName(ctx, tenantId, body.name, id);
    set.name = body.name;
  }
  if (body.fromEmail !== undefined) set.fromEmail = body.fromEmail;
  if (body.fromName !== undefined) set.fromName = body.fromName;
  if (body.enabled !== undefined) set.enabled = body.enabled ? 1 : 0;
  const touched = TRANSPORT_FIELDS.filter((f) => body[f] !== undefined);
  if (body.transport === undefined && touched.length > 0) {
    throw Invalid(`${touched.join(", ")} change the transport: send the full transport with \`transport\``, { field: touched[0], code: "transport_required" });
  }
  if (body.transport !== undefined) {
    const same = body.transport === row.transport && (body.transport === "resend" || (body.host === row.host && (body.username ?? null) === row.username));
    const given = body.transport === "resend" ? body.apiKey : body.password;
    const keep = same && !given && row.secret !== null ? secretOf(ctx, row) : null;
    if (body.transport === "smtp" && !same && body.username && !body.password) {
      throw Invalid("a changed SMTP host or username needs its password", { field: "password", code: "required" });
    }
    const { plainSecret, ...cols } = transportCols({ ...body, transport: body.transport }, keep, ctx.config.outboundAllow ?? []);
    Object.assign(set, cols, { secret: plainSecret === null ? null : seal(keyOf(ctx), plainSecret, row.id) });
  }
  set.updatedAt = ctx.clock.now().toISOString();
  const updated = await ctx.storage.email.updateServer(tenantId, id, set);
  if (updated === "name_taken") throw nameTaken(set.name ?? row.name);
  if (!updated) throw NotFound(`e-mail server ${id} not found`, { field: "id" });
  return toView(updated);
}

export async function deleteServer(ctx: EmailContext, tenantId: string, id: string): Promise<{ id: string; deleted: true }> {
  await live(ctx, tenantId, id);
  const now = ctx.clock.now().toISOString();
  await ctx.storage.email.updateServer(tenantId, id, { deletedAt: now, updatedAt: now });
  return { id, deleted: true };
}

function usable(row: EmailServerRow): void {
  if (row.enabled !== 1) throw Conflict(`e-mail server ${row.name} is disabled`, { code: "server_disabled" });
}

/** Sends through the row's transport; SendFailed carries only a generic reason. */
async function deliver(ctx: EmailContext, row: EmailServerRow, m: Omit<Outgoing, "from">): Promise<string> {
  const secret = secretOf(ctx, row);
  const from = { email: row.fromEmail, name: row.fromName };
  try {
    let id: string;
    if (row.transport === "resend") id = await sendResend(ctx.config.resendUrl ?? "https://api.resend.com", secret ?? "", { ...m, from });
    else {
      const security = (row.security ?? "starttls") as "starttls" | "tls" | "none";
      id = await sendSmtp({ host: row.host ?? "", port: row.port ?? DEFAULT_PORTS[security], security, username: row.username, password: secret, caPem: row.caPem }, { ...m, from }, ctx.config.outboundAllow ?? []);
    }
    ctx.metrics?.emails.inc({ outcome: "sent" });
    return id;
  } catch (err) {
    ctx.metrics?.emails.inc({ outcome: "failed" });
    if (err instanceof SendFailed) ctx.log.warn("e-mail send failed", { serverId: row.id, transport: row.transport, reason: err.message, code: err.code });
    if (err instanceof OutboundRefused) ctx.log.warn("e-mail send refused: the SMTP host is inside this server's network", { serverId: row.id, host: err.host });
    throw err;
  }
}

export async function testServer(ctx: EmailContext, tenantId: string, id: string, to: string) {
  const row = await live(ctx, tenantId, id);
  usable(row);
  try {
    const messageId = await deliver(ctx, row, {
      to: [to], cc: [], bcc: [], subject: `Test message from ${row.name}`,
      text: `This is a test message sent through the e-mail server "${row.name}" of your automation server.`, attachments: [],
    });
    return { ok: true as const, transport: row.transport, messageId };
  } catch (err) {
    if (err instanceof SendFailed) return { ok: false as const, error: `test message not sent: ${err.message}` };
    if (err instanceof OutboundRefused) throw hostRefused(err);
    throw err;
  }
}

/** The limits of a message, checked before anything leaves. */
function checkMessage(m: MailMessage): void {
  const count = m.to.length + m.cc.length + m.bcc.length;
  if (m.to.length === 0) throw Invalid("give at least one recipient in to", { field: "to", code: "required" });
  if (count > MAX_RECIPIENTS) throw Invalid(`at most ${MAX_RECIPIENTS} recipients in to, cc and bcc together (got ${count})`, { field: "to", code: "too_many_recipients" });
  if (Buffer.byteLength(m.text) > MAX_TEXT_BYTES) throw Invalid(`text is larger than ${MAX_TEXT_BYTES} bytes`, { field: "text", code: "too_large" });
  if (m.attachments.length > MAX_ATTACHMENTS) throw Invalid(`at most ${MAX_ATTACHMENTS} attachments (got ${m.attachments.length})`, { field: "attachments", code: "too_many_attachments" });
  const total = m.attachments.reduce((s, a) => s + a.bytes.byteLength, 0);
  if (total > MAX_ATTACHMENT_BYTES) throw Invalid(`attachments total ${total} bytes, over the ${MAX_ATTACHMENT_BYTES} limit`, { field: "attachments", code: "too_large" });
}

/**
 * One `action.email` execution. The delivery row is claimed before the send: a run resumed after a
 * crash in the middle finds it and does not send a second copy (unknown outcome → the step fails).
 */
export async function sendForRun(ctx: EmailContext, tenantId: string, runId: string, path: string, m: MailMessage): Promise<MailSent> {
  checkMessage(m);
  const email = ctx.storage.email;
  const row = await email.serverByRef(tenantId, m.server);
  if (!row) throw NotFound(`e-mail server ${m.server} not found`, { field: "server" });
  usable(row);
  const earlier = await email.delivery(runId, path);
  if (earlier?.state === "sent" && earlier.result) return JSON.parse(earlier.result) as MailSent;
  if (!(await email.claimDelivery({ runId, stepPath: path, tenantId, serverId: row.id, state: "sending", result: null, createdAt: ctx.clock.now().toISOString() }))) {
    throw Conflict("an earlier attempt of this step was interrupted while sending; it is not sent again automatically (rerun the run to send)", { code: "email_outcome_unknown" });
  }
  let messageId: string;
  try {
    messageId = await deliver(ctx, row, m);
  } catch (err) {
    await email.releaseDelivery(runId, path);
    if (err instanceof SendFailed) throw Conflict(`e-mail not sent: ${err.message}`, { code: "email_send_failed" });
    if (err instanceof OutboundRefused) throw Conflict(`e-mail not sent through server ${row.name}: its SMTP host ${err.message}`, { code: "email_host_not_allowed" });
    throw err;
  }
  const sent: MailSent = {
    serverId: row.id, messageId, provider: row.transport as MailSent["provider"], to: m.to, cc: m.cc, bcc: m.bcc,
    attachmentCount: m.attachments.length, totalBytes: m.attachments.reduce((s, a) => s + a.bytes.byteLength, 0),
  };
  await email.markSent(runId, path, JSON.stringify(sent));
  return sent;
}
