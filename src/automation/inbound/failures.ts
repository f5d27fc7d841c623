// Which failures of an inbound delivery are worth the sender's retry. A 4xx makes a mail server queue
// the message and try again for days, so it is kept for local conditions that pass by themselves (the
// database busy or unreachable, a full disk, the blob store down); whatever the message itself causes
// is a permanent 5xx, so the sender bounces it at once instead of retrying something that cannot work.
import { DomainError } from "../../kernel/errors";
import { databaseUnavailable } from "../../kernel/pg";

/** A refusal and its SMTP reply code (the server adds the enhanced status code). */
export class Refusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "Refusal";
  }
}

// SQLite: locked or busy, out of space, I/O failures, a file it cannot open; the OS: space and
// quota, I/O, descriptors, memory, a peer (PostgreSQL, S3) refusing or dropping the connection;
// Bun's fetch (the S3 store) reports connection failures with codes of its own.
const TRANSIENT_CODE =
  /^(SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|NOMEM|PROTOCOL)|ENOSPC|EDQUOT|EFBIG|EIO|EMFILE|ENFILE|ENOMEM|EAGAIN|EBUSY|ECONNREFUSED|ECONNRESET|ECONNABORTED|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|ConnectionRefused|ConnectionClosed|FailedToOpenSocket|ERR_POSTGRES_(CONNECTION_|IDLE_TIMEOUT|LIFETIME_TIMEOUT|QUERY_CANCELLED))/;
// PostgreSQL SQLSTATEs: connection (08), insufficient resources such as a full disk (53), shutdown
// (57P0x), serialization failure and deadlock (40001, 40P01), lock not available (55P03), I/O (58).
const TRANSIENT_SQLSTATE = /^(08|53|57P0|40001|40P01|55P03|58)/;
const TRANSIENT_KINDS: DomainError["kind"][] = ["unavailable", "rate_limited", "timeout"];

/** Whether `err` is a local condition that may be gone when the sender retries (4xx), not the message's fault. */
export function transient(err: unknown): boolean {
  if (err instanceof DomainError) return TRANSIENT_KINDS.includes(err.kind);
  if (databaseUnavailable(err)) return true;
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno, name } = e as { code?: unknown; errno?: unknown; name?: unknown };
    if (typeof code === "string" && TRANSIENT_CODE.test(code)) return true;
    if (typeof errno === "string" && TRANSIENT_SQLSTATE.test(errno)) return true;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && TRANSIENT_SQLSTATE.test(code)) return true;
    // The blob store's S3 answered an error (ours and Bun's S3Client name them so): storage, not the message.
    if (name === "S3Error") return true;
  }
  return false;
}

/**
 * Whether the database refused a value the message brought (PostgreSQL's data exceptions, 22xxx, such
 * as a NUL byte in a text column; SQLite's SQLITE_TOOBIG): the same message fails the same way again.
 */
export function refusedData(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    if (code === "SQLITE_TOOBIG" || (typeof errno === "string" && /^22/.test(errno)) || (typeof code === "string" && /^22[0-9A-Z]{3}$/.test(code))) return true;
  }
  return false;
}

/** One line for the log: the error's name, code and message, without its stack. */
export function reasonOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err).split("\n")[0];
  const code = (err as { code?: unknown }).code;
  return `${err.name}${typeof code === "string" ? ` ${code}` : ""}: ${err.message}`.split("\n")[0];
}
