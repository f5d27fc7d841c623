// The built-in SMTP receiver (smtp-server): MAIL FROM counts the sender's rate, RCPT TO checks the
// address and the whitelist, and DATA is answered 250 only once InboundService.deliver has committed
// the runs. No AUTH (this is an MX, not a submission server); STARTTLS when a certificate is given.
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { FatalError } from "../../kernel/errors";
import type { AutomationContext } from "../context";
import type { SmtpConfig } from "../config/smtp";
import { reasonOf, Refusal, transient } from "./failures";
import { inboundOf } from "./service";

/** A message names at most this many recipients (RFC 5321 asks servers to take at least 100). */
const MAX_RECIPIENTS = 100;

export interface SmtpReceiver {
  port: number;
  /** `smtp://HOST:PORT`. */
  url: string;
  /** Stops taking connections; a transaction in flight is cut after a few seconds (its sender retries). */
  stop(): Promise<void>;
}

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

export async function startSmtp(ctx: AutomationContext, cfg: SmtpConfig, hostname: string): Promise<SmtpReceiver> {
  const inbound = inboundOf(ctx);
  const relay = (err: unknown) => {
    if (err instanceof Refusal) {
      ctx.log.info("inbound e-mail refused", { code: err.code, reason: err.message });
      return smtpError(err.code, err.message);
    }
    if (transient(err)) {
      ctx.log.warn("inbound e-mail deferred", { reason: reasonOf(err) });
      return smtpError(451, "local error; try again later");
    }
    // Not the message's fault as far as we know: a bug, so the stack, and 451, so the sender keeps the
    // message and retries (a fixed and restarted server accepts it) instead of bouncing it for good.
    ctx.log.error("inbound e-mail failed", { error: (err as Error)?.stack ?? String(err) });
    return smtpError(451, "local error; try again later");
  };
  const options: SMTPServerOptions = {
    name: ctx.config.mailDomain,
    banner: "automation-server inbound e-mail",
    size: cfg.maxSize,
    authOptional: true,
    disabledCommands: cfg.tls ? ["AUTH"] : ["AUTH", "STARTTLS"],
    ...(cfg.tls ? { key: cfg.tls.key, cert: cfg.tls.cert } : {}),
    logger: false,
    // RFC 3463 codes (550 5.1.1, 554 5.6.0, ...): smtp-server hides them unless asked, the docs promise them.
    hideENHANCEDSTATUSCODES: false,
    closeTimeout: 5_000,
    onMailFrom(address, _session, cb) {
      inbound.sender(address.address).then(() => cb(), (err) => cb(relay(err)));
    },
    onRcptTo(address, session, cb) {
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return cb(smtpError(452, `at most ${MAX_RECIPIENTS} recipients per message`));
      const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
      inbound.recipient(address.address, from).then(() => cb(), (err) => cb(relay(err)));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      let bytes = 0;
      // Past the limit the rest is read and dropped: the client gets its 552 after the final dot.
      stream.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes <= cfg.maxSize) chunks.push(chunk);
      });
      stream.on("error", (err) => cb(relay(err)));
      stream.on("end", () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        const to = session.envelope.rcptTo.map((r) => r.address);
        if ((stream as unknown as { sizeExceeded?: boolean }).sizeExceeded || bytes > cfg.maxSize) {
          return cb(relay(new Refusal(552, `message exceeds the maximum size of ${cfg.maxSize} bytes`)));
        }
        // Logged before anything is stored: a crash from here to the 250 leaves nothing, and the sender retries.
        ctx.log.info("inbound e-mail received", { from, to: to.join(","), bytes });
        inbound.deliver(new Uint8Array(Buffer.concat(chunks, bytes)), { from, to }).then(
          (reply) => cb(null, reply),
          (err) => cb(relay(err)),
        );
      });
    },
  };
  const server = new SMTPServer(options);
  const port = await new Promise<number>((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE") return reject(new FatalError(`smtp port ${cfg.port} is already in use`));
      if (err.code === "EACCES") return reject(new FatalError(`no permission to listen on smtp port ${cfg.port}`));
      reject(new FatalError(`cannot listen on ${hostname}:${cfg.port} for smtp: ${err.message}`));
    };
    server.once("error", fail);
    server.listen(cfg.port, hostname, () => {
      server.off("error", fail);
      server.on("error", (err) => ctx.log.debug("smtp connection error", { error: err.message }));
      resolve((server.server.address() as { port: number }).port);
    });
  });
  const host = hostname === "0.0.0.0" || hostname === "::" ? "localhost" : hostname;
  return {
    port,
    url: `smtp://${host}:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
