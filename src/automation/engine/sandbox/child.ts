// The sandbox child process: `automation-server __sandbox` (or child-main.ts from source). It reads one
// JSON job per line on stdin, runs it in QuickJS (quickjs.ts) and writes one JSON reply per line on
// stdout, one job at a time. The parent (isolate.ts) SIGKILLs it at the script's deadline when QuickJS
// could not stop the script itself, which frees the CPU for sure; stdin EOF (the parent went away) ends it.
import { StepError } from "../errors";
import { runScript, type ScriptLimits } from "./quickjs";

/** The hidden subcommand every executable that runs the engine must dispatch to `serveSandbox()`. */
export const SANDBOX_SUBCOMMAND = "__sandbox";

export interface ScriptJob {
  id: number;
  code: string;
  args: unknown[];
  limits: ScriptLimits;
}

export type ScriptReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: { message: string; code: string; retryable: boolean } };

async function answer(job: ScriptJob): Promise<ScriptReply> {
  try {
    return { id: job.id, ok: true, value: await runScript(job.code, job.args, job.limits) };
  } catch (e) {
    const err = e instanceof StepError ? e : new StepError((e as Error)?.message ?? String(e), "script_error");
    return { id: job.id, ok: false, error: { message: err.message, code: err.code, retryable: err.retryable } };
  }
}

// A parent killed with SIGKILL cannot kill its children; one stuck in a heavy built-in would not read
// stdin's EOF. A watchdog thread probes the parent (signal 0) and kills this process once it is gone.
// (process.ppid is read once at start in Bun, so re-parenting is not visible through it.)
const watchdog = (parent: number) => `setInterval(() => {
  try { process.kill(${parent}, 0); } catch (e) { if (e && e.code === "ESRCH") process.kill(process.pid, "SIGKILL"); }
}, 500);`;

/** Serves script jobs on stdin/stdout until stdin closes. */
export async function serveSandbox(): Promise<void> {
  try {
    new Worker(URL.createObjectURL(new Blob([watchdog(process.ppid)], { type: "text/javascript" }))).unref();
  } catch {
    // Without the watchdog, an orphan still ends at stdin EOF or at QuickJS's own deadline.
  }
  for await (const line of console) {
    if (!line.trim()) continue;
    let job: ScriptJob;
    try {
      job = JSON.parse(line) as ScriptJob;
    } catch {
      continue;
    }
    process.stdout.write(JSON.stringify(await answer(job)) + "\n");
  }
  process.exit(0);
}
