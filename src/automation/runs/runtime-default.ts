// The runtime production runs use: C's workflow parser and engine.
import { Invalid } from "../../kernel/errors";
import type { RunsRuntime } from "./runtime";

let engine: RunsRuntime | undefined;

export function defaultRuntime(): RunsRuntime {
  if (!engine) throw Invalid("the workflow engine is not available in this build", { code: "engine_unavailable" });
  return engine;
}
