// Runs untrusted workflow JavaScript in QuickJS compiled to WASM. The context has no file system,
// network, process or timers: only the ECMAScript built-ins. A deadline interrupts endless loops and a
// heap limit stops unbounded allocation; either way the script fails and the host carries on.
import variant from "@jitl/quickjs-singlefile-cjs-release-sync";
import { newQuickJSWASMModuleFromVariant, newVariant, shouldInterruptAfterDeadline, type QuickJSRuntime, type QuickJSWASMModule } from "quickjs-emscripten";
import { StepError } from "../errors";

// QuickJS's own heap accounting misses realloc growth in this build, so the hard memory limit is the
// WASM memory itself: one module per limit, its linear memory capped at 16 MiB baseline + the limit.
// When malloc fails inside, QuickJS throws "out of memory" and the module stays usable.
const modules = new Map<number, Promise<QuickJSWASMModule>>();
const PAGE = 64 * 1024;
const BASELINE_PAGES = 256;

function moduleFor(memoryBytes: number): Promise<QuickJSWASMModule> {
  let m = modules.get(memoryBytes);
  if (!m) {
    const memory = new WebAssembly.Memory({ initial: BASELINE_PAGES, maximum: BASELINE_PAGES + Math.ceil(memoryBytes / PAGE) });
    m = newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmMemory: memory }));
    modules.set(memoryBytes, m);
  }
  return m;
}

export interface ScriptLimits {
  timeoutMs: number;
  memoryBytes: number;
}

const PRELUDE = `globalThis.console = { log() {}, info() {}, warn() {}, error() {}, debug() {} };`;

// A runtime is reused across scripts (creating one costs milliseconds); every script still gets its own
// context, so globals never leak between runs. After any failure, or every RECYCLE scripts, the
// runtime is thrown away so no state from a stopped script can linger.
const runtimes = new Map<number, { runtime: QuickJSRuntime; uses: number }>();
const RECYCLE = 500;

function dropRuntime(memoryBytes: number): void {
  const held = runtimes.get(memoryBytes);
  runtimes.delete(memoryBytes);
  try {
    held?.runtime.dispose();
  } catch {
    modules.delete(memoryBytes);
  }
}

/** Calls `function script(...args)` defined by `code`; returns its (awaited) result as JSON. */
export async function runScript(code: string, args: unknown[], limits: ScriptLimits): Promise<unknown> {
  const qjs = await moduleFor(limits.memoryBytes);
  let held = runtimes.get(limits.memoryBytes);
  if (!held || held.uses >= RECYCLE) {
    if (held) dropRuntime(limits.memoryBytes);
    held = { runtime: qjs.newRuntime(), uses: 0 };
    runtimes.set(limits.memoryBytes, held);
  }
  held.uses++;
  const runtime = held.runtime;
  let ok = false;
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(512 * 1024);
  runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + limits.timeoutMs));
  const vm = runtime.newContext();
  try {
    const argsHandle = vm.newString(JSON.stringify(args));
    vm.setProp(vm.global, "__args", argsHandle);
    argsHandle.dispose();
    vm.unwrapResult(vm.evalCode(PRELUDE)).dispose();
    const call = vm.evalCode(
      `${code}\n;if (typeof script !== "function") throw new TypeError("the code must define function script(...)");\nscript(...JSON.parse(globalThis.__args));`,
      "script.js",
    );
    if (call.error) throw failure(vm.dump(call.error), call.error.dispose());
    try {
      let state = vm.getPromiseState(call.value);
      if (state.type === "pending") {
        const jobs = runtime.executePendingJobs();
        if (jobs.error) jobs.error.dispose();
        state = vm.getPromiseState(call.value);
      }
      if (state.type === "pending") throw new StepError("the script's promise never settled", "script_error", { retryable: false });
      if (state.type === "rejected") throw failure(vm.dump(state.error), state.error.dispose());
      vm.setProp(vm.global, "__result", state.value);
      if (!state.notAPromise) state.value.dispose();
    } finally {
      call.value.dispose();
    }
    const json = vm.evalCode(`JSON.stringify(globalThis.__result === undefined ? null : globalThis.__result)`);
    if (json.error) throw failure(vm.dump(json.error), json.error.dispose());
    const text = vm.getString(json.value);
    json.value.dispose();
    ok = true;
    return text === undefined ? null : JSON.parse(text);
  } catch (e) {
    if (e instanceof StepError) throw e;
    // Anything else means the WASM instance itself broke (e.g. aborted): start a fresh one next time.
    modules.delete(limits.memoryBytes);
    throw new StepError(`script sandbox failed: ${(e as Error).message}`, "script_error");
  } finally {
    try {
      vm.dispose();
    } catch {
      ok = false;
    }
    if (!ok) dropRuntime(limits.memoryBytes);
  }
}

function failure(dumped: unknown, _disposed?: void): StepError {
  const err = (dumped ?? {}) as { name?: string; message?: string; stack?: string };
  const message = typeof dumped === "object" && dumped !== null ? String(err.message ?? JSON.stringify(dumped)) : String(dumped);
  if (/interrupted/i.test(message)) return new StepError("script exceeded its time limit and was stopped", "script_timeout");
  if (/out of memory/i.test(message) || dumped === null) return new StepError("script exceeded its memory limit and was stopped", "script_memory_limit");
  if (/stack overflow/i.test(message)) return new StepError("script overflowed its stack", "script_error", { retryable: false });
  return new StepError(`script error: ${err.name ? `${err.name}: ` : ""}${message}`, "script_error", { retryable: false });
}
