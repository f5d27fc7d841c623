// `--demo` documents: the "Demo invoice" DOCX template (built here, so the compiled binary needs no
// asset) and the `demo-mail` SMTP server (127.0.0.1:1025, no TLS: a local mail catcher such as
// Mailpit). The invoice workflows name the template by the placeholder id below.
import { DomainError } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import { createServer } from "../email/service";
import { buildDocx } from "../templates/build-docx";
import { createTemplateFromBytes, findTemplateByName } from "../templates/service";

/** Written in demo/workflows/*.yaml; replaced by the seeded template's id when they are deployed. */
export const DEMO_TEMPLATE_PLACEHOLDER = "tmpl_demoinvoice";
const TEMPLATE_NAME = "Demo invoice";
const MAIL_SERVER = "demo-mail";

export function demoInvoiceDocx(): Uint8Array {
  return buildDocx([
    [{ text: "INVOICE ", bold: true }, { text: "{number}", bold: true }],
    "Date: {date}",
    "Bill to: {customer.name}, {customer.address}",
    "",
    "{#items}",
    "{description}: {quantity} × {unitPrice} = {lineTotal} {currency}",
    "{/items}",
    "",
    [{ text: "Total: {total} {currency}", bold: true }],
    "Payment terms: {terms}",
  ]);
}

/** Idempotent: a restart over the same data dir reuses what is there. */
export async function seedDemoDocuments(ctx: AutomationContext, tenantId: string): Promise<{ templateId: string; mailServer: string }> {
  const existing = await findTemplateByName(ctx, tenantId, TEMPLATE_NAME);
  const template = existing ?? (await createTemplateFromBytes(ctx, tenantId, { name: TEMPLATE_NAME, description: "Invoice with line items; {terms} is left out to show NOT FOUND highlighting" }, "demo-invoice.docx", demoInvoiceDocx()));
  if (!(await ctx.storage.email.serverByRef(tenantId, MAIL_SERVER))) {
    // Two demo starts at once (two instances): the other one may create it first; that is fine.
    await createServer(ctx, tenantId, { name: MAIL_SERVER, transport: "smtp", host: "127.0.0.1", port: 1025, security: "none", fromEmail: "demo@example.com", fromName: "Automation demo" }, { seed: true }).catch(
      (err: unknown) => {
        if (!(err instanceof DomainError && err.code === "name_taken")) throw err;
      },
    );
  }
  return { templateId: template.id, mailServer: MAIL_SERVER };
}
