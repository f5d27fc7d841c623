// Templates and their revisions on PostgreSQL. A new revision locks its template row, so two replaces
// at once number their revisions one after the other (the unique (template, number) index backs it).
import type { RevisionRow, TemplateRow } from "../tables/templates";
import type { TemplateStore } from "../../templates/store";
import { type Pg, plain, plainRows } from "./rows";

const TEMPLATE_COLS = `id, tenant_id AS "tenantId", name, description, current_revision_id AS "currentRevisionId", created_at AS "createdAt", updated_at AS "updatedAt", deleted_at AS "deletedAt"`;
const REVISION_COLS = `id, template_id AS "templateId", tenant_id AS "tenantId", number, filename, format, mime_type AS "mimeType", size::float8 AS size, sha256,
  tokens::text AS tokens, created_at AS "createdAt"`;

export class PgTemplateStore implements TemplateStore {
  constructor(readonly pg: Pg) {}

  private async insertRevision(tx: Pg, r: RevisionRow): Promise<void> {
    await tx`INSERT INTO template_revisions (id, template_id, tenant_id, number, filename, format, mime_type, size, sha256, tokens, created_at)
      VALUES (${r.id}, ${r.templateId}, ${r.tenantId}, ${r.number}, ${r.filename}, ${r.format}, ${r.mimeType}, ${r.size}, ${r.sha256}, CAST(${r.tokens} AS text)::json, ${r.createdAt})`;
  }

  async create(t: TemplateRow, r: RevisionRow): Promise<void> {
    await this.pg.begin(async (tx) => {
      await tx`INSERT INTO templates (id, tenant_id, name, description, current_revision_id, created_at, updated_at, deleted_at)
        VALUES (${t.id}, ${t.tenantId}, ${t.name}, ${t.description}, ${t.currentRevisionId}, ${t.createdAt}, ${t.updatedAt}, ${t.deletedAt})`;
      await this.insertRevision(tx, r);
    });
  }

  async addRevision(tenantId: string, templateId: string, r: Omit<RevisionRow, "number">, now: string): Promise<RevisionRow | null> {
    return this.pg.begin(async (tx) => {
      const locked = await tx`SELECT id FROM templates WHERE tenant_id = ${tenantId} AND id = ${templateId} AND deleted_at IS NULL FOR UPDATE`;
      if (!locked.length) return null;
      const [{ n }] = await tx`SELECT COALESCE(MAX(number), 0)::int AS n FROM template_revisions WHERE template_id = ${templateId}`;
      const row = { ...r, number: n + 1 };
      await this.insertRevision(tx, row);
      await tx`UPDATE templates SET current_revision_id = ${row.id}, updated_at = ${now} WHERE id = ${templateId}`;
      return row;
    });
  }

  private async oneTemplate(where: string, args: unknown[]): Promise<TemplateRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${TEMPLATE_COLS} FROM templates WHERE tenant_id = $1 AND deleted_at IS NULL AND ${where}`, args);
    return r ? plain<TemplateRow>(r) : undefined;
  }

  byId(tenantId: string, id: string): Promise<TemplateRow | undefined> {
    return this.oneTemplate("id = $2", [tenantId, id]);
  }

  byName(tenantId: string, name: string): Promise<TemplateRow | undefined> {
    return this.oneTemplate("name = $2 ORDER BY created_at DESC LIMIT 1", [tenantId, name]);
  }

  async list(tenantId: string, limit: number, offset: number): Promise<{ rows: TemplateRow[]; total: number }> {
    const rows = await this.pg.unsafe(`SELECT ${TEMPLATE_COLS} FROM templates WHERE tenant_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, [tenantId, limit, offset]);
    const [{ n }] = await this.pg`SELECT COUNT(*)::int AS n FROM templates WHERE tenant_id = ${tenantId} AND deleted_at IS NULL`;
    return { rows: plainRows<TemplateRow>(rows), total: n };
  }

  async softDelete(tenantId: string, id: string, now: string): Promise<boolean> {
    const r = await this.pg`UPDATE templates SET deleted_at = ${now}, updated_at = ${now} WHERE tenant_id = ${tenantId} AND id = ${id} AND deleted_at IS NULL`;
    return r.count > 0;
  }

  async revision(tenantId: string, id: string): Promise<RevisionRow | undefined> {
    const [r] = await this.pg.unsafe(`SELECT ${REVISION_COLS} FROM template_revisions WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    return r ? plain<RevisionRow>(r) : undefined;
  }

  async revisionsOf(templateId: string): Promise<RevisionRow[]> {
    return plainRows<RevisionRow>(await this.pg.unsafe(`SELECT ${REVISION_COLS} FROM template_revisions WHERE template_id = $1 ORDER BY number DESC`, [templateId]));
  }
}
