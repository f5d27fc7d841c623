// Reading a large YAML document costs the YAML parser ~1-3 ms of CPU per KiB on a busy 2-core machine
// (1-3 s for a 1 MiB workflow) and validating it another ~0.1-0.2 ms per KiB: a route that takes YAML
// parses it on a worker thread first (prepareWorkflow, prepareYaml), and the synchronous parse that
// follows (parseWorkflow, readYaml) picks the result up instead of parsing the text again. Small
// documents are parsed inline: below the threshold the thread hop costs more than it saves.
import { runOffThread } from "../offthread/run";
import { type ParseOptions, rememberParse } from "./parse";
import { nestedTooDeep, rememberRead } from "./source";

/** Documents at least this long (characters) are parsed on a worker thread; measured in docs/robustness.md. */
export const OFFTHREAD_YAML_CHARS = 8 * 1024;
/** Longer documents are refused by the size limits before they are read. */
const MAX_CHARS = 1024 * 1024;
/** Past this the thread is stopped and the synchronous parse reads the text itself, as before. */
const DEADLINE_MS = 30_000;

// A document nested too deep is refused by a one-pass scan in the synchronous read: no thread for it.
const large = (yaml: unknown): yaml is string => typeof yaml === "string" && yaml.length >= OFFTHREAD_YAML_CHARS && yaml.length <= MAX_CHARS && !nestedTooDeep(yaml);

/** Parses workflow YAML on a worker thread when it is large, so the `parseWorkflow` that follows finds it done. Never throws. */
export async function prepareWorkflow(yaml: unknown, opts: ParseOptions = {}): Promise<void> {
  if (!large(yaml)) return;
  try {
    rememberParse(yaml, opts, await runOffThread("workflow.parse", { yaml, internal: opts.internal === true }, { deadlineMs: DEADLINE_MS }));
  } catch {
    // the synchronous parse does it, with the same result and messages
  }
}

/** Reads other YAML (evaluators) on a worker thread when it is large, for the `readYaml` that follows. Never throws. */
export async function prepareYaml(yaml: unknown): Promise<void> {
  if (!large(yaml)) return;
  try {
    rememberRead(yaml, await runOffThread("yaml.read", yaml, { deadlineMs: DEADLINE_MS }));
  } catch {
    // the synchronous read does it
  }
}
