// The runtime production runs use: C's workflow parser and engine.
import { execute } from "../engine/execute";
import type { RunsRuntime } from "./runtime";
import { workflowRuntime } from "./runtime-workflow";

let engine: RunsRuntime | undefined;

export function defaultRuntime(): RunsRuntime {
  engine ??= workflowRuntime(execute);
  return engine;
}
