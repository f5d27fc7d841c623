// What the run worker hands the engine for `control.human_review`: park the run on a task (runs/ owns
// the parking; human-review/ answers the reviewers and wakes the run through runs/service.ts).
// The task rows, the step record (`waiting`) and the run's `waiting` status commit together
// (`ctx.storage.humanReview.park`), and a step executed again after a crash finds the task its earlier
// attempt created instead of a second.
import { newId } from "../../kernel/ids";
import type { AutomationContext } from "../context";
import type { HumanReviewGateway, ParkRequest } from "../engine/contract";
import { StepError } from "../engine/errors";
import type { FileRow, RunRow } from "./store";
import type { TaskFile } from "../human-review/store";

function taskFile(f: FileRow, role: string): TaskFile {
  const segs = f.path.split("/");
  return {
    fileId: f.fileId ?? newId("file"),
    filename: f.name,
    mimeType: f.contentType,
    size: f.size,
    fieldName: f.role === "input" && segs[0] === "input" ? (segs[1] ?? null) : null,
    artifactPath: f.path,
    role,
    sha256: f.sha256,
  };
}

export function humanReviewGateway(ctx: AutomationContext, run: RunRow): HumanReviewGateway {
  const runs = ctx.storage.runs;
  return {
    async park(req: ParkRequest) {
      const files: TaskFile[] = req.includeRunInputs ? (await runs.files(run.id, "input")).map((f) => taskFile(f, "input")) : [];
      for (const ref of req.attachments) {
        const f = await runs.file(run.id, ref.$file);
        if (!f) throw new StepError(`attachment ${ref.$file} is not a file of this run`, "invalid_config", { retryable: false });
        files.push(taskFile(f, "attachment"));
      }
      const at = ctx.clock.now().toISOString();
      await runs.flush(); // the step's start must be committed before the park turns it `waiting`
      return ctx.storage.humanReview.park(
        {
          id: newId("hrt"),
          tenantId: run.tenantId,
          runId: run.id,
          stepPath: req.step.path,
          automationId: run.automationId,
          automationName: run.automationName,
          sourceLabel: req.step.name,
          status: "pending",
          requiredCount: req.fields.filter((f) => f.required).length,
          data: JSON.stringify(req.data ?? null),
          files: JSON.stringify(files),
          instructions: req.instructions ?? null,
          meta: JSON.stringify(req.meta),
          createdAt: at,
        },
        req.fields.map((f, i) => ({
          id: newId("hrd"),
          position: i,
          path: f.path,
          originalValue: JSON.stringify(f.value ?? null),
          currentValue: JSON.stringify(f.value ?? null),
          required: f.required ? 1 : 0,
          reason: f.reason,
        })),
      );
    },
  };
}
