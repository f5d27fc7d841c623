// `workflows push FILE.yaml --tenant SLUG`: creates the workflow, or adds a version (tagged with
// --version or the YAML's own `version:`) when a workflow of that name already exists.
import { readFileSync, statSync } from "node:fs";
import { systemClock } from "../../kernel/clock";
import { helpText, parseFlags } from "../../kernel/config";
import { FatalError, UsageError } from "../../kernel/errors";
import { askText, asCliError, openAdminStorage, printJson } from "../admin";
import { storageFlags } from "../config";
import { requireTenant } from "../tenancy/service";
import { MAX_YAML_BYTES } from "./model";
import { pushWorkflow } from "./service";

const flags = {
  tenant: { type: "string", value: "SLUG", help: "tenant slug or id" },
  version: { type: "string", value: "TAG", help: "version tag for an existing workflow (default: the YAML's version)" },
  activate: { type: "boolean", default: true, help: "make the pushed version current (--no-activate keeps the current one)" },
  ...storageFlags,
  json: { type: "boolean", help: "print one JSON object" },
  help: { type: "boolean", short: "h", help: "show this help" },
} as const;

const USAGE = `Usage: automation-server workflows push FILE.yaml --tenant SLUG [--version TAG] [--no-activate] [--json]

Creates a workflow from a YAML file, or a new version of it when the tenant already has a workflow
of that name.`;

export async function workflowsCommand(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) {
    process.stdout.write(helpText(USAGE, flags));
    if (sub === undefined) throw new UsageError("missing subcommand: workflows push");
    return;
  }
  if (sub !== "push") throw new UsageError(`unknown command "workflows ${sub}"`);
  const { values, positionals } = parseFlags(rest, flags);
  if (values.help) return void process.stdout.write(helpText(USAGE, flags));
  if (positionals.length !== 1) throw new UsageError("workflows push takes exactly one FILE.yaml");
  const file = positionals[0];
  let yaml: string;
  try {
    if (statSync(file).size > MAX_YAML_BYTES) throw new FatalError(`${file}: larger than 1 MiB`);
    yaml = readFileSync(file, "utf8");
  } catch (err) {
    if (err instanceof FatalError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : (code ?? (err as Error).message);
    throw new FatalError(`cannot read ${file}: ${why}`);
  }
  const tenantRef = values.tenant ?? (await askText("tenant", "Tenant slug"));
  const db = await openAdminStorage(values);
  try {
    const tenant = await requireTenant(db.storage.tenancy, tenantRef);
    const pushed = await pushWorkflow(db.storage.automations, systemClock, tenant.id, yaml, { version: values.version, activate: values.activate });
    if (pushed.created) {
      const a = pushed.automation;
      const out = { id: a.id, slug: a.slug, version: a.version, created: true };
      if (values.json) return printJson(out);
      return void process.stdout.write(`created workflow ${a.slug} (${a.id})${a.version ? ` at version ${a.version}` : ""}\n`);
    }
    const { automation: existing, version: v } = pushed;
    const out = { id: existing.id, slug: existing.slug, version: v.version, versionId: v.id, isCurrent: v.isCurrent, created: false };
    if (values.json) return printJson(out);
    process.stdout.write(`pushed ${existing.slug} version ${v.version} (${v.id})${v.isCurrent ? ", now current" : ""}\n`);
  } catch (err) {
    asCliError(err);
  } finally {
    await db.close();
  }
}
