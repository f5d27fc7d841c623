// What an agent run reports beyond a workflow run's envelope, in the reference's RunSource and
// RunUsage fields for agent runs: the model that answered, the release's Git provenance, the turns.
import type { RunRow, StepRow } from "../runs/store";
import { parseReleaseRef } from "./releases";

export function agentSource(r: Pick<RunRow, "sourceRef" | "requestedRef" | "output">) {
  const { tag, commit } = parseReleaseRef(r.sourceRef);
  const out = r.output ? (JSON.parse(r.output) as { model?: unknown } | null) : null;
  return {
    model: typeof out?.model === "string" ? out.model : null,
    // What the caller asked for (`version`, as given), then the release it resolved to.
    git: { requestedRef: r.requestedRef, resolvedRef: commit, resolvedTag: tag, commitSha: commit },
  };
}

/** Model turns the agent finished (a turn replayed from the journal after a restart counts once). */
export const agentTurns = (steps: Pick<StepRow, "type" | "status">[]) => steps.filter((s) => s.type === "agent.model" && s.status === "completed").length;
