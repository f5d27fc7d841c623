// A received message, parsed (mailparser) into what a run gets: `input.email`, the attachments mapped
// onto the workflow's file inputs, and the trigger's summary.
import { simpleParser, type AddressObject, type EmailAddress, type ParsedMail } from "mailparser";

export interface InboundMessage {
  /** The From: header's first address (lowercase); "" when the message has no usable From: (see `authors`). */
  from: string;
  /**
   * Every address the whitelist must let in: all of From: and, when present, all of Sender:
   * (lowercase, groups flattened). A string instead when the headers name no one usable: no From:,
   * an empty group (`undisclosed-recipients:;`), an entry without an address, or the header twice.
   */
  authors: string[] | string;
  subject: string;
  text: string;
  html: string | null;
  /** Header name (lowercase) → value, decoded where mailparser decodes it; repeated headers joined by "\n". */
  headers: Record<string, string>;
  /** The Message-ID header, or one derived from the bytes (`<sha256:…@inbound>`) when the message has none. */
  messageId: string;
  attachments: { filename: string; contentType: string; content: Uint8Array }[];
}

export async function parseMessage(raw: Uint8Array): Promise<InboundMessage> {
  const mail = await simpleParser(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
  });
  const authors = authorsOf(mail);
  return {
    from: Array.isArray(authors) ? authors[0] : "",
    authors,
    subject: mail.subject ?? "",
    text: mail.text ?? "",
    html: mail.html === false ? null : (mail.html ?? null),
    headers: headersOf(mail),
    messageId: mail.messageId?.trim() || `<sha256:${new Bun.CryptoHasher("sha256").update(raw).digest("hex")}@inbound>`,
    // Parts the HTML shows inline (cid: images such as signature logos) are not attachments the sender chose.
    attachments: mail.attachments
      .filter((a) => !a.related)
      .map((a, i) => ({
        filename: a.filename?.trim() || `attachment-${i + 1}`,
        contentType: (a.contentType || "application/octet-stream").toLowerCase(),
        content: new Uint8Array(a.content.buffer, a.content.byteOffset, a.content.byteLength),
      })),
  };
}

/**
 * From: must name at least one address and Sender: (optional) likewise, each header once, every entry
 * an address: the whitelist checks all of them, so one allowed address cannot vouch for another.
 */
function authorsOf(mail: ParsedMail): string[] | string {
  const times = (key: string) => mail.headerLines.filter((l) => l.key === key).length;
  if (times("from") === 0) return "the message has no From: header";
  if (times("from") > 1) return "the message has more than one From: header";
  if (times("sender") > 1) return "the message has more than one Sender: header";
  const from = addressesOf(mail.from);
  if (typeof from === "string") return `From: ${from}`;
  if (from.length === 0) return "From: names no address (an empty group such as undisclosed-recipients:;)";
  const sender = times("sender") ? addressesOf(mail.headers.get("sender") as AddressObject | undefined) : [];
  if (typeof sender === "string") return `Sender: ${sender}`;
  if (times("sender") && sender.length === 0) return "Sender: names no address";
  return [...new Set([...from, ...sender])];
}

function addressesOf(header: AddressObject | AddressObject[] | undefined): string[] | string {
  const out: string[] = [];
  const walk = (list: EmailAddress[]): string | undefined => {
    for (const a of list) {
      if (a.group) {
        const bad = walk(a.group);
        if (bad) return bad;
        continue;
      }
      const address = a.address?.trim().toLowerCase() ?? "";
      if (!/^[^@\s]+@[^@\s]+$/.test(address)) return `"${(a.name || a.address || "").slice(0, 100)}" is not an address`;
      out.push(address);
    }
  };
  for (const h of Array.isArray(header) ? header : header ? [header] : []) {
    const bad = walk(h.value);
    if (bad) return bad;
  }
  return out;
}

function headersOf(mail: ParsedMail): Record<string, string> {
  const raw = new Map<string, string[]>();
  for (const { key, line } of mail.headerLines) {
    const value = line.slice(line.indexOf(":") + 1).replace(/\r?\n[ \t]+/g, " ").trim();
    raw.set(key, [...(raw.get(key) ?? []), value]);
  }
  const out: Record<string, string> = {};
  for (const [key, values] of raw) {
    const parsed: unknown = mail.headers.get(key);
    if (typeof parsed === "string") out[key] = parsed;
    else if (isAddresses(parsed)) out[key] = parsed.text;
    else if (Array.isArray(parsed) && parsed.every((p) => typeof p === "string")) out[key] = parsed.join("\n");
    else out[key] = values.join("\n");
  }
  return out;
}

const isAddresses = (x: unknown): x is { text: string } =>
  typeof x === "object" && x !== null && typeof (x as { text?: unknown }).text === "string" && Array.isArray((x as { value?: unknown }).value);

export interface MappedAttachment {
  filename: string;
  contentType: string;
  size: number;
  /** The file input it was passed as; null when no input took it. */
  input: string | null;
}

/**
 * Attachments → file inputs. An attachment whose name without extension equals a `file` input's name
 * (case-insensitive: `invoice.pdf` → `invoice`) goes there; the first attachment no name claimed goes
 * to the first `file` input if that is still empty. An input takes one attachment; the rest are
 * listed in the trigger (`input: null`) but passed to no input.
 */
export function mapAttachments(
  attachments: InboundMessage["attachments"],
  fileInputs: string[],
): { files: Record<string, File>; list: MappedAttachment[] } {
  const files: Record<string, File> = {};
  const target: (string | null)[] = attachments.map(() => null);
  const byName = new Map(fileInputs.map((n) => [n.toLowerCase(), n]));
  attachments.forEach((a, i) => {
    const stem = a.filename.replace(/\.[^.]*$/, "").toLowerCase();
    const input = byName.get(stem);
    if (input && !(input in files)) {
      files[input] = toFile(a);
      target[i] = input;
    }
  });
  const first = fileInputs[0];
  const leftover = target.indexOf(null);
  if (first !== undefined && !(first in files) && leftover !== -1) {
    files[first] = toFile(attachments[leftover]);
    target[leftover] = first;
  }
  return {
    files,
    list: attachments.map((a, i) => ({ filename: a.filename, contentType: a.contentType, size: a.content.byteLength, input: target[i] })),
  };
}

const toFile = (a: InboundMessage["attachments"][number]) => new File([a.content], a.filename, { type: a.contentType });
