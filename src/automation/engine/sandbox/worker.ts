// Worker-thread entry of the script sandbox (see isolate.ts): runs one script at a time in QuickJS and
// posts the result back. Compiled binaries must include this file as an extra entrypoint.
import { StepError } from "../errors";
import { runScript, type ScriptLimits } from "./quickjs";

declare const self: Worker;

export interface ScriptJob {
  id: number;
  code: string;
  args: unknown[];
  limits: ScriptLimits;
}

export type ScriptReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: { message: string; code: string; retryable: boolean } };

self.onmessage = async (event: MessageEvent<ScriptJob>) => {
  const { id, code, args, limits } = event.data;
  let reply: ScriptReply;
  try {
    reply = { id, ok: true, value: await runScript(code, args, limits) };
  } catch (e) {
    const err = e instanceof StepError ? e : new StepError((e as Error).message, "script_error");
    reply = { id, ok: false, error: { message: err.message, code: err.code, retryable: err.retryable } };
  }
  self.postMessage(reply);
};
