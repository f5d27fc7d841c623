import { afterEach } from "bun:test";
// Test doubles for the engine's collaborators: an in-memory run journal and services with in-memory
// files. They are real implementations of the contract, not mocks of the engine.
import { systemClock } from "../../../src/kernel/clock";
import type { EngineServices, EvalContext, ExecuteResult, FileRef, RunJournal, StepRecord } from "../../../src/automation/engine/contract";
import { execute } from "../../../src/automation/engine/execute";
import { parseWorkflow, type Workflow } from "../../../src/automation/workflow";

export class MemoryJournal implements RunJournal {
  readonly completed: Map<string, StepRecord>;
  readonly started: { path: string; attempt: number }[] = [];
  readonly finished: StepRecord[] = [];
  /** "start <path>" / "finish <path>" in the order the engine reported them. */
  readonly log: string[] = [];
  constructor(previous: StepRecord[] = []) {
    this.completed = new Map(previous.map((r) => [r.path, r]));
  }
  stepStarted(step: { path: string; attempt: number }): void {
    this.started.push({ path: step.path, attempt: step.attempt });
    this.log.push(`start ${step.path}`);
  }
  async stepFinished(step: StepRecord): Promise<void> {
    await Bun.sleep(0);
    this.finished.push(step);
    this.log.push(`finish ${step.path}`);
  }
  record(path: string): StepRecord {
    const r = this.finished.find((x) => x.path === path);
    if (!r) throw new Error(`no record for ${path}; have ${this.finished.map((x) => x.path).join(", ")}`);
    return r;
  }
}

export interface TestFiles {
  written: { name: string; contentType: string; bytes: Uint8Array; stepName: string; ref: FileRef }[];
  stored: Map<string, Uint8Array>;
}

export function testServices(overrides: Partial<EngineServices> = {}): EngineServices & { files: TestFiles } {
  const files: TestFiles = { written: [], stored: new Map() };
  return {
    clock: systemClock,
    env: {},
    httpAllowHosts: [],
    async readFile(ref) {
      const bytes = files.stored.get(ref.$file);
      if (!bytes) throw new Error(`no file ${ref.$file}`);
      return bytes;
    },
    async writeFile(file) {
      const ref: FileRef = { $file: `artifacts/${file.stepName}/${file.name}`, filename: file.name, contentType: file.contentType, size: file.bytes.byteLength };
      files.stored.set(ref.$file, file.bytes);
      files.written.push({ ...file, ref });
      return ref;
    },
    async invokeWorkflow() {
      throw new Error("invokeWorkflow not configured in this test");
    },
    ...overrides,
    files,
  };
}

export function workflow(yaml: string): Workflow {
  const r = parseWorkflow(yaml);
  if (!r.ok) throw new Error(`workflow does not parse: ${JSON.stringify(r.issues)}`);
  return r.workflow;
}

export async function run(
  yaml: string | Workflow,
  input: Record<string, unknown> = {},
  opts: { journal?: MemoryJournal; services?: EngineServices; signal?: AbortSignal; evaluation?: boolean; eval?: EvalContext } = {},
): Promise<ExecuteResult & { journal: MemoryJournal }> {
  const journal = opts.journal ?? new MemoryJournal();
  const result = await execute({
    workflow: typeof yaml === "string" ? workflow(yaml) : yaml,
    input,
    journal,
    services: opts.services ?? testServices(),
    signal: opts.signal ?? new AbortController().signal,
    evaluation: opts.evaluation,
    eval: opts.eval,
  });
  return { ...result, journal };
}

/** A one-step workflow of `type` with `with` given as YAML flow text. */
export function oneStep(type: string, withYaml: string, extra = ""): string {
  return `name: t\nsteps:\n  - name: s\n    type: ${type}\n    with: ${withYaml}\n${extra}`;
}

/** A real HTTP server on loopback recording every request; `respond` decides the answer. */
export function loopback(respond: (req: Request, hit: number, body: string) => Response | Promise<Response> = () => Response.json({ ok: true })) {
  const hits: { method: string; path: string; body: string; headers: Headers }[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body = await req.text();
      hits.push({ method: req.method, path: url.pathname + url.search, body, headers: req.headers });
      return respond(req, hits.length, body);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    host: `127.0.0.1:${server.port}`,
    hits,
    count: (path: string) => hits.filter((h) => h.path === path).length,
    stop: () => server.stop(true),
  };
}

/**
 * CPU time (ms) this process (all its threads) and its child processes use over the next `ms`
 * milliseconds. A sandbox left running a script after its deadline shows up as about `ms`.
 */
export async function cpuBurnMs(ms: number): Promise<number> {
  const ticks = (await Bun.$`getconf CLK_TCK`.quiet().text().catch(() => "100")).trim();
  const perTick = 1000 / (Number(ticks) || 100);
  const children = async (): Promise<Map<number, number>> => {
    const out = new Map<number, number>();
    for (const entry of new Bun.Glob("[0-9]*").scanSync({ cwd: "/proc", onlyFiles: false })) {
      try {
        const stat = await Bun.file(`/proc/${entry}/stat`).text();
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        if (Number(fields[1]) === process.pid) out.set(Number(entry), (Number(fields[11]) + Number(fields[12])) * perTick);
      } catch {
        // gone meanwhile
      }
    }
    return out;
  };
  const self0 = process.cpuUsage();
  const kids0 = await children();
  await Bun.sleep(ms);
  const self = process.cpuUsage(self0);
  const kids1 = await children();
  let kids = 0;
  for (const [pid, t] of kids1) kids += t - (kids0.get(pid) ?? t);
  return (self.user + self.system) / 1000 + kids;
}

/**
 * For a test file that starts loopback servers: returns a `loopback` whose servers are all stopped
 * after each test.
 */
export function loopbackPerTest(): typeof loopback {
  const servers: { stop(): void }[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.stop();
  });
  return (...args) => {
    const s = loopback(...args);
    servers.push(s);
    return s;
  };
}

/**
 * A loopback server (from `serve`) whose `/slow` path waits at a gate: `reached` resolves when a
 * request arrives there, `release()` lets it answer. Other paths answer at once.
 */
export function gatedServer(serve: typeof loopback) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  const reached = new Promise<void>((r) => (arrived = r));
  const api = serve(async (req) => {
    if (new URL(req.url).pathname === "/slow") {
      arrived();
      await gate;
    }
    return Response.json({ ok: true });
  });
  return { api, reached, release };
}
