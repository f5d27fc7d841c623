// Real outbound-mail peers on loopback for tests: an SMTP server (smtp-server) that requires STARTTLS
// before AUTH, with a self-signed certificate made by openssl for 127.0.0.1, parsing each message
// with mailparser; and a fake Resend API (Bun.serve) recording the requests it receives.
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface Received {
  mail: ParsedMail;
  envelope: { from: string; to: string[] };
  user: string | undefined;
  secure: boolean;
}

export interface SmtpSink {
  port: number;
  /** The certificate (PEM) clients must trust. */
  cert: string;
  user: string;
  password: string;
  messages: Received[];
  /** Resolves with the next message received. */
  next(): Promise<Received>;
  stop(): Promise<void>;
}

export function selfSignedCert(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "smtp-cert-"));
  try {
    const r = Bun.spawnSync([
      "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
      "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"),
    ], { stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`openssl failed: ${r.stderr.toString()}`);
    return { key: readFileSync(join(dir, "key.pem"), "utf8"), cert: readFileSync(join(dir, "cert.pem"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let certCache: { key: string; cert: string } | undefined;

export async function startSmtpSink(opts: { user?: string; password?: string } = {}): Promise<SmtpSink> {
  certCache ??= selfSignedCert();
  const user = opts.user ?? "mailer";
  const password = opts.password ?? `pw-${crypto.randomUUID()}`;
  const messages: Received[] = [];
  let waiters: ((r: Received) => void)[] = [];
  const server = new SMTPServer({
    key: certCache.key,
    cert: certCache.cert,
    authMethods: ["PLAIN", "LOGIN"],
    // Default: AUTH only after STARTTLS (allowInsecureAuth false), so a session that authenticates used TLS.
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === user && auth.password === password) return cb(null, { user });
      cb(new Error("Invalid username or password"));
    },
    onData(stream, session, cb) {
      simpleParser(stream)
        .then((mail) => {
          const r: Received = {
            mail,
            envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "", to: session.envelope.rcptTo.map((x) => x.address) },
            user: session.user as string | undefined,
            secure: session.secure,
          };
          messages.push(r);
          const w = waiters;
          waiters = [];
          for (const f of w) f(r);
          cb();
        })
        .catch((e: Error) => cb(e));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  return {
    port,
    cert: certCache.cert,
    user,
    password,
    messages,
    next: () => new Promise((resolve) => waiters.push(resolve)),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface ResendFake {
  url: string;
  requests: { authorization: string | null; body: Record<string, unknown> }[];
  /** Status the next requests get (200 by default). */
  status: number;
  stop(): void;
}

export function startResendFake(): ResendFake {
  const fake: ResendFake = {
    url: "",
    requests: [],
    status: 200,
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/emails") return new Response("not found", { status: 404 });
      fake.requests.push({ authorization: req.headers.get("authorization"), body: (await req.json()) as Record<string, unknown> });
      if (fake.status !== 200) return Response.json({ message: "refused" }, { status: fake.status });
      return Response.json({ id: `re_${fake.requests.length}` });
    },
  });
  fake.url = `http://127.0.0.1:${server.port}`;
  return fake;
}

/** Starts an SMTP sink and a Resend fake before the test file's tests and stops them after. */
export function mailFakes(): { readonly sink: SmtpSink; readonly resend: ResendFake } {
  let sink: SmtpSink | undefined;
  let resend: ResendFake | undefined;
  beforeAll(async () => {
    sink = await startSmtpSink();
    resend = startResendFake();
  });
  afterAll(async () => {
    await sink?.stop();
    resend?.stop();
  });
  return {
    get sink() {
      return sink!;
    },
    get resend() {
      return resend!;
    },
  };
}

/**
 * The reference for inbound-mail benchmarks: a plain SMTP server (no TLS, no AUTH, no parsing) that
 * only stores each message's bytes as a file in `dir` and answers 250 once the file is written.
 */
export async function startStoreSink(dir: string): Promise<{ port: number; stored(): number; stop(): Promise<void> }> {
  let n = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    logger: false,
    size: 64 * 1024 * 1024,
    onData(stream, _session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        Bun.write(join(dir, `${++n}.eml`), Buffer.concat(chunks)).then(() => cb(null, "stored"), (e: Error) => cb(e));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    port: (server.server.address() as { port: number }).port,
    stored: () => n,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
