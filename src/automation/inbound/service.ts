// The inbound e-mail rules, free of SMTP: who may send (rate per sender), which automation an address
// belongs to and whether its whitelist lets the sender in, and turning a message into exactly one run
// per automation. Refusals are `Refusal`s carrying the SMTP reply code; smtp.ts only relays them.
import { DomainError } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import { runsOf } from "../runs/service";
import { emailTriggerOf, whitelisted, type EmailTrigger } from "../workflow/email-trigger";
import type { Workflow } from "../engine/workflow-types";
import { formatAddress, mintToken, tokenOf } from "./address";
import { reasonOf, Refusal, refusedData, transient } from "./failures";
import { mapAttachments, parseMessage, type InboundMessage } from "./message";
import type { InboundStore } from "./store";

export { Refusal };

export interface InboundOptions {
  /** The domain the addresses are under (`--mail-domain`); undefined: no addresses. */
  mailDomain?: string;
  /** Messages per envelope sender per minute (`--smtp-rate-limit`); 0 = no limit. */
  ratePerMinute: number;
}

interface Target {
  tenantId: string;
  automationId: string;
  trigger: EmailTrigger;
  fileInputs: string[];
}

/** `email:<automation>:<sha256 of the Message-ID>`: the unique key of the run a message starts. */
const dedupeKey = (automationId: string, messageId: string) =>
  `email:${automationId}:${new Bun.CryptoHasher("sha256").update(messageId).digest("hex")}`;

export class InboundService {
  constructor(
    private readonly ctx: AutomationContext,
    readonly store: InboundStore,
    private readonly opts: InboundOptions,
  ) {}

  /** MAIL FROM: counts the message against the sender's minute; over the limit is a 451 (try later). */
  async sender(address: string): Promise<void> {
    if (!this.opts.ratePerMinute) return;
    const sender = address.toLowerCase() || "<>";
    const n = await this.store.countSender(sender, Math.floor(this.ctx.clock.now().getTime() / 60_000));
    if (n > this.opts.ratePerMinute) throw new Refusal(451, `too many messages from ${sender} this minute (limit ${this.opts.ratePerMinute}); try again later`);
  }

  /** RCPT TO: an address of an e-mail-triggered automation (550 otherwise) whose whitelist has `sender` (550 otherwise). */
  async recipient(rcpt: string, sender: string): Promise<Target> {
    const target = await this.target(rcpt);
    if (!target) throw new Refusal(550, `no such address: ${rcpt}`);
    if (!whitelisted(target.trigger, sender)) throw new Refusal(550, `sender ${sender || "<>"} is not on the whitelist of ${rcpt}`);
    return target;
  }

  private async target(rcpt: string): Promise<Target | undefined> {
    const token = this.opts.mailDomain ? tokenOf(rcpt, this.opts.mailDomain) : undefined;
    const owner = token ? await this.store.byToken(token) : undefined;
    if (!owner) return undefined;
    let yaml: string;
    try {
      yaml = (await runsOf(this.ctx).resolve(owner.tenantId, owner.automationId, { trigger: "email" })).yaml;
    } catch (err) {
      // A disabled automation starts nothing; the sender learns why.
      if (err instanceof DomainError && err.code === "automation_disabled") throw new Refusal(550, `${rcpt} belongs to a disabled automation`);
      if (err instanceof DomainError) return undefined; // gone, no current version, or no e-mail trigger now
      throw err;
    }
    const parsed = runsOf(this.ctx).runtime.parse(yaml);
    if (!parsed.ok) return undefined;
    const workflow = parsed.workflow as Workflow;
    const trigger = emailTriggerOf(workflow);
    if (!trigger) return undefined;
    const fileInputs = workflow.inputs.filter((i) => i.type === "file").map((i) => i.name);
    return { tenantId: owner.tenantId, automationId: owner.automationId, trigger, fileInputs };
  }

  /**
   * End of DATA: one run per recipient, each committed (run, files, dedupe key) before this resolves;
   * the server answers 250 only then. A recipient whose run this Message-ID already started gets none.
   * When a recipient fails the message is refused with the most retryable code (4xx over 5xx): the
   * sender's retry then starts only the runs still missing.
   */
  async deliver(raw: Uint8Array, envelope: { from: string; to: string[] }): Promise<string> {
    const receivedAt = this.ctx.clock.now().toISOString();
    // The parser's limits (nesting, header size) and any other parse failure depend on the bytes alone:
    // the same message fails the same way on every retry, so it is refused for good.
    const msg = await parseMessage(raw).catch((err: unknown) => {
      throw new Refusal(554, `the message cannot be parsed: ${(err as Error)?.message ?? String(err)}`);
    });
    // The whitelist checks who wrote the message; a message that names no one cannot pass it.
    const authors = msg.authors;
    if (typeof authors === "string") throw new Refusal(550, `${authors}: a message needs a From: address on the whitelist`);
    const runs: string[] = [];
    let failure: Refusal | undefined;
    for (const rcpt of envelope.to) {
      try {
        runs.push(await this.deliverTo(rcpt.toLowerCase(), envelope.from, authors, msg, receivedAt));
      } catch (err) {
        const r = this.refusal(err, rcpt);
        if (!failure || r.code < failure.code) failure = r;
      }
    }
    if (failure) throw failure;
    return `OK: run ${runs.join(", ")}`;
  }

  private async deliverTo(rcpt: string, envelopeFrom: string, authors: string[], msg: InboundMessage, receivedAt: string): Promise<string> {
    // Checked again: the active version (and its whitelist) may have changed since RCPT TO.
    const t = await this.recipient(rcpt, envelopeFrom);
    // Every author must pass: one whitelisted address in From: (or Sender:) does not vouch for another beside it.
    for (const author of authors) {
      if (!whitelisted(t.trigger, author)) throw new Refusal(550, `sender ${author} (From:/Sender:) is not on the whitelist of ${rcpt}`);
    }
    const key = dedupeKey(t.automationId, msg.messageId);
    const seen = await this.store.runOf(key);
    if (seen) {
      this.ctx.log.info("inbound e-mail already started a run", { runId: seen, messageId: msg.messageId });
      return seen;
    }
    const { files, list } = mapAttachments(msg.attachments, t.fileInputs);
    const email = { from: msg.from, to: rcpt, subject: msg.subject, text: msg.text, html: msg.html, headers: msg.headers };
    try {
      const run = await runsOf(this.ctx).start(
        { tenantId: t.tenantId, keyId: "" },
        {
          target: t.automationId,
          input: { email },
          files,
          trigger: "email",
          dedupeKey: key,
          triggerDetail: { email: { from: msg.from, to: rcpt, subject: msg.subject, messageId: msg.messageId, receivedAt, attachments: list } },
        },
      );
      this.ctx.log.info("inbound e-mail started a run", { runId: run.id, automationId: t.automationId, messageId: msg.messageId });
      return run.id;
    } catch (err) {
      // The same message on another connection (or instance) committed first: its run is this one.
      const winner = await this.store.runOf(key);
      if (winner) return winner;
      throw err;
    }
  }

  private refusal(err: unknown, rcpt: string): Refusal {
    if (err instanceof Refusal) return err;
    if (err instanceof DomainError && err.kind === "too_large") return new Refusal(552, err.message);
    // The message itself cannot make a run (a required file input without an attachment, ...): resending it will not help.
    if (err instanceof DomainError && ["invalid", "forbidden", "not_found"].includes(err.kind)) {
      return new Refusal(550, `${rcpt} cannot start a run from this message: ${err.message}`);
    }
    if (transient(err)) {
      this.ctx.log.warn("inbound e-mail not stored; the sender will retry", { rcpt, reason: reasonOf(err) });
      return new Refusal(451, "local error while storing the message; try again later");
    }
    if (refusedData(err)) {
      this.ctx.log.info("inbound e-mail refused", { code: 554, rcpt, reason: reasonOf(err) });
      return new Refusal(554, "the message holds a value that cannot be stored");
    }
    // Not a failure we know the message caused: a bug, so the stack, and 451 so the sender keeps the
    // message and retries (a fixed server accepts it) rather than bouncing mail we failed to handle.
    this.ctx.log.error("inbound e-mail failed", { rcpt, error: (err as Error)?.stack ?? String(err) });
    return new Refusal(451, "local error while storing the message; try again later");
  }

  /**
   * The address and whitelist of an automation whose active version has an e-mail trigger (the token
   * is minted on the first call); null without one, address null without `--mail-domain`.
   */
  async inboundEmail(a: { tenantId: string; id: string; slug: string }, yaml: string | undefined): Promise<{ address: string | null; whitelist: EmailTrigger["whitelist"] } | null> {
    const parsed = yaml === undefined ? undefined : runsOf(this.ctx).runtime.parse(yaml);
    const trigger = parsed?.ok ? emailTriggerOf(parsed.workflow as Workflow) : undefined;
    if (!trigger) return null;
    const domain = this.opts.mailDomain;
    if (!domain) return { address: null, whitelist: trigger.whitelist };
    const token = await this.store.token(a.tenantId, a.id, mintToken, this.ctx.clock.now().toISOString());
    return { address: formatAddress(a.slug, token, domain), whitelist: trigger.whitelist };
  }
}

const services = new WeakMap<AutomationContext, InboundService>();

/** The one InboundService of a context (the SMTP receiver and the automations routes share it). */
export function inboundOf(ctx: AutomationContext): InboundService {
  let s = services.get(ctx);
  if (!s) {
    s = new InboundService(ctx, ctx.storage.inbound, { mailDomain: ctx.config.mailDomain, ratePerMinute: ctx.config.smtp?.rateLimit ?? 0 });
    services.set(ctx, s);
  }
  return s;
}
