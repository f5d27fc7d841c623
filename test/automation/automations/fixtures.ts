// Workflow YAML used by the automations tests.
export const wf = (name: string, opts: { version?: string; description?: string; triggers?: string; extra?: string } = {}) =>
  [
    `name: ${name}`,
    opts.version ? `version: ${opts.version}` : "",
    opts.description ? `description: ${opts.description}` : "",
    `triggerMethods: ${opts.triggers ?? "[{type: api}, {type: manual}]"}`,
    "inputs:",
    "  - {name: invoice, type: object, required: true}",
    "  - {name: note, type: string, required: false}",
    "steps:",
    "  - name: total",
    "    type: transform.set",
    "    with: {fields: {total: 1}}",
    "output:",
    '  total: "{{ steps.total.output.total }}"',
    opts.extra ?? "",
  ]
    .filter(Boolean)
    .join("\n") + "\n";
