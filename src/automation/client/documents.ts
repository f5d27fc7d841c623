// Templates (DOCX/XLSX, immutable revisions) and outbound e-mail servers.
import { enc, type FileInput, resolveFile } from "./files";
import type { Transport } from "./transport";
import type { EmailServer, Template } from "./types";

export type TemplateSource = { fileId: string } | { file: FileInput; filename?: string };

function multipart(source: { file: FileInput; filename?: string }, fields: Record<string, string | null | undefined> = {}): FormData {
  const { blob, filename } = resolveFile(source.file, { filename: source.filename, fallbackName: "template" });
  const form = new FormData();
  for (const [k, val] of Object.entries(fields)) if (val !== undefined && val !== null) form.append(k, val);
  form.append("file", blob, filename);
  return form;
}

export class TemplatesResource {
  constructor(private readonly http: Transport) {}

  create(source: TemplateSource, meta: { name: string; description?: string }): Promise<Template> {
    if ("fileId" in source) return this.http.json({ method: "POST", path: "/v1/templates", json: { fileId: source.fileId, ...meta } });
    return this.http.json({ method: "POST", path: "/v1/templates", body: multipart(source, meta) });
  }

  list(query: { limit?: number; offset?: number } = {}): Promise<{ items: Template[]; total: number }> {
    return this.http.json({ method: "GET", path: "/v1/templates", query: { ...query } });
  }

  get(id: string): Promise<Template> {
    return this.http.json({ method: "GET", path: `/v1/templates/${enc(id)}` });
  }

  /** A new immutable revision becomes current. */
  replace(id: string, source: TemplateSource): Promise<Template> {
    if ("fileId" in source) return this.http.json({ method: "PUT", path: `/v1/templates/${enc(id)}`, json: { fileId: source.fileId } });
    return this.http.json({ method: "PUT", path: `/v1/templates/${enc(id)}`, body: multipart(source) });
  }

  delete(id: string): Promise<{ id: string; deleted: true }> {
    return this.http.json({ method: "DELETE", path: `/v1/templates/${enc(id)}` });
  }

  /** Every revision of a template, oldest first, the current one marked. */
  revisions(id: string): Promise<{ templateId: string; revisions: { id: string; number: number; filename: string; size: number; sha256: string; current: boolean; createdAt: string }[] }> {
    return this.http.json({ method: "GET", path: `/v1/templates/${enc(id)}/revisions` });
  }

  /** The bytes of the current revision, or of `revisionId`. */
  async content(id: string, revisionId?: string): Promise<Uint8Array> {
    const res = await this.http.response({ method: "GET", path: `/v1/templates/${enc(id)}/content`, query: revisionId ? { revision_id: revisionId } : {} });
    return new Uint8Array(await res.arrayBuffer());
  }
}

interface Meta {
  name: string;
  fromEmail: string;
  fromName?: string | null;
  enabled?: boolean;
}
export type ResendSettings = { transport: "resend"; apiKey: string };
export type SmtpSettings = { transport: "smtp"; host: string; port?: number; security?: "starttls" | "tls" | "none"; username?: string | null; password?: string | null; caPem?: string | null };

export class EmailServersResource {
  constructor(private readonly http: Transport) {}

  create(body: Meta & (ResendSettings | SmtpSettings)): Promise<EmailServer> {
    return this.http.json({ method: "POST", path: "/v1/email-servers", json: body });
  }

  list(query: { limit?: number; offset?: number } = {}): Promise<{ data: EmailServer[]; total: number; limit: number; offset: number }> {
    return this.http.json({ method: "GET", path: "/v1/email-servers", query: { ...query } });
  }

  get(id: string): Promise<EmailServer> {
    return this.http.json({ method: "GET", path: `/v1/email-servers/${enc(id)}` });
  }

  /** Metadata only, or with a full transport (`transport` and its settings). */
  update(id: string, body: Partial<Meta> | (Partial<Meta> & (Partial<ResendSettings> | Partial<SmtpSettings>) & { transport: "resend" | "smtp" })): Promise<EmailServer> {
    return this.http.json({ method: "PATCH", path: `/v1/email-servers/${enc(id)}`, json: body });
  }

  delete(id: string): Promise<{ id: string; deleted: true }> {
    return this.http.json({ method: "DELETE", path: `/v1/email-servers/${enc(id)}` });
  }

  test(id: string, to: string): Promise<{ ok: true; transport: string; messageId: string } | { ok: false; error: string }> {
    return this.http.json({ method: "POST", path: `/v1/email-servers/${enc(id)}/test`, json: { to } });
  }
}
