// A bare SMTP client over a raw socket: it reports each reply exactly as the server sent it (code and
// text), where nodemailer would fold a refusal into an exception. Used to check that refusals are 5xx.
import { connect, type Socket } from "node:net";

export interface Transaction {
  from: string;
  to: string[];
  /** The message as it goes after DATA (CRLF line ends); dot-stuffed and terminated here. */
  data: string | Uint8Array;
}

export interface Replies {
  mail: string;
  rcpt: string[];
  /** The reply to DATA itself (354), then the one after the final dot; absent when no recipient was accepted. */
  data?: string;
  end?: string;
}

class Session {
  private buf = "";
  private lines: string[] = [];
  private waiting?: (reply: string) => void;
  private failed?: Error;

  constructor(private readonly socket: Socket) {
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      this.buf += chunk;
      for (let i = this.buf.indexOf("\r\n"); i !== -1; i = this.buf.indexOf("\r\n")) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 2);
        this.lines.push(line);
        // The last line of a reply has a space (or nothing) after the code; earlier ones a dash.
        if (/^\d{3}(?: |$)/.test(line)) this.flush();
      }
    });
    socket.on("error", (err) => {
      this.failed = err;
      this.flush();
    });
    socket.on("close", () => {
      this.failed ??= new Error("connection closed");
      this.flush();
    });
  }

  private replies: string[] = [];
  private flush(): void {
    if (this.lines.length) this.replies.push(this.lines.splice(0).join("\n"));
    if (!this.waiting) return;
    const next = this.replies.shift();
    if (next !== undefined) {
      const w = this.waiting;
      this.waiting = undefined;
      w(next);
    } else if (this.failed) {
      const w = this.waiting;
      this.waiting = undefined;
      w(`--- ${this.failed.message}`);
    }
  }

  reply(): Promise<string> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.flush();
    });
  }

  async command(line: string): Promise<string> {
    this.socket.write(`${line}\r\n`);
    return this.reply();
  }
}

/** Dot-stuffs a message (RFC 5321 4.5.2) and appends the terminating `.` line. */
function stuffed(data: string | Uint8Array): Buffer {
  const text = typeof data === "string" ? data : Buffer.from(data).toString("latin1");
  const body = text.replace(/(^|\r\n)\./g, "$1..");
  return Buffer.from(`${body}${body.endsWith("\r\n") ? "" : "\r\n"}.\r\n`, "latin1");
}

/** Sends one transaction over a new connection to 127.0.0.1:`port` and returns every reply. */
export async function rawSend(port: number, tx: Transaction): Promise<Replies> {
  const socket = connect({ host: "127.0.0.1", port });
  const s = new Session(socket);
  try {
    const greeting = await s.reply();
    if (!greeting.startsWith("220")) throw new Error(`greeting: ${greeting}`);
    const ehlo = await s.command("EHLO client.test");
    if (!ehlo.startsWith("250")) throw new Error(`EHLO: ${ehlo}`);
    const out: Replies = { mail: await s.command(`MAIL FROM:<${tx.from}>`), rcpt: [] };
    if (!out.mail.startsWith("250")) return out;
    for (const to of tx.to) out.rcpt.push(await s.command(`RCPT TO:<${to}>`));
    if (!out.rcpt.some((r) => r.startsWith("250"))) return out;
    out.data = await s.command("DATA");
    if (!out.data.startsWith("354")) return out;
    socket.write(stuffed(tx.data));
    out.end = await s.reply();
    await s.command("QUIT");
    return out;
  } finally {
    socket.destroy();
  }
}

/** The three-digit code of a reply. */
export const codeOf = (reply: string | undefined): number => Number(reply?.slice(0, 3)) || 0;
