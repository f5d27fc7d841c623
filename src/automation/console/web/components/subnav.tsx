// The links between the evaluation pages of one automation.
import { href } from "../router";

export function SubNav({ automation }: { automation: string }) {
  return (
    <nav class="subnav" aria-label="Evaluation of this automation">
      <a href={href(["automations", automation])}>Automation</a>
      <a href={href(["automations", automation, "dataset"])}>Dataset</a>
      <a href={href(["automations", automation, "evaluators"])}>Evaluators</a>
      <a href={href(["automations", automation, "experiments"])}>Experiments</a>
      <a href={href(["automations", automation, "backtests"])}>Backtests</a>
      <a href={href(["automations", automation, "health"])}>Review health</a>
    </nav>
  );
}
