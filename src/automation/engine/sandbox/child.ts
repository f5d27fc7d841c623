// The sandbox child process: `automation-server __sandbox` (or child-main.ts from source). It reads one
// JSON job per line on stdin, runs it in QuickJS (quickjs.ts) and writes one JSON reply per line on
// stdout, one job at a time. The parent (isolate.ts) SIGKILLs it at the script's deadline when QuickJS
// could not stop the script itself, which frees the CPU for sure; stdin EOF (the parent went away) ends it.
import { dlopen, FFIType } from "bun:ffi";
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

// A parent killed with SIGKILL cannot kill its children, and one stuck in a long built-in never reads
// stdin's EOF. The parent passes its pid: on Linux the kernel kills this process when its parent dies
// (PR_SET_PDEATHSIG), and a watchdog thread also probes that pid (process.ppid is not trustworthy here:
// it was seen as 1 in a child whose parent was alive).
const PR_SET_PDEATHSIG = 1;

function parentAlive(parent: number): boolean {
  try {
    process.kill(parent, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code !== "ESRCH";
  }
}

function setParentDeathSignal(): void {
  if (process.platform !== "linux") return;
  try {
    const libc = dlopen("libc.so.6", { prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 } });
    libc.symbols.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0);
  } catch {
    // the watchdog still covers it
  }
}

const watchdog = (parent: number) => `setInterval(() => {
  try { process.kill(${parent}, 0); } catch (e) { if (e && e.code === "ESRCH") process.kill(process.pid, "SIGKILL"); }
}, 250);`;

/** Serves script jobs on stdin/stdout until stdin closes or process `parent` is gone. */
export async function serveSandbox(parent: number): Promise<void> {
  if (!(parent > 1)) parent = process.ppid;
  setParentDeathSignal();
  if (!parentAlive(parent)) process.exit(0); // it died before the death signal was armed
  try {
    new Worker(URL.createObjectURL(new Blob([watchdog(parent)], { type: "text/javascript" }))).unref();
  } catch {
    // an orphan still ends at stdin EOF or at QuickJS's own deadline
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
