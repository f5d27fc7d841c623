// The workflow engine's public surface for the runs subsystem.
export type { EngineServices, ExecuteOptions, ExecuteResult, FileRef, RunJournal, StepRecord } from "./contract";
export { execute } from "./execute";
export { stepKind, stepKinds } from "./registry";
