// `workflows push FILE.yaml`: creates a workflow (or a new version of it) from a YAML file.
import { UsageError } from "../../kernel/errors";

export async function workflowsCommand(argv: string[]): Promise<void> {
  throw new UsageError(`workflows ${argv[0] ?? ""}: not available yet`);
}
