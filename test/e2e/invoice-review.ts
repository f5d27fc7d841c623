// The workflow the people and SSO e2e tests decide: a total extracted, then a human review that pauses
// the run (the total's confidence is under the threshold) until someone approves or rejects it.
export const INVOICE_REVIEW_YAML = [
  "name: invoice-check",
  "inputs:",
  "  - {name: total, type: number, required: true}",
  "steps:",
  "  - name: extract",
  "    type: transform.set",
  '    with: {fields: {total: "{{ input.total }}"}}',
  "  - name: check",
  "    type: control.human_review",
  "    with:",
  '      data: "{{ steps.extract.output }}"',
  "      fieldMetadata: {/total: {confidence: 0.4, label: Total}}",
  "      selection: {mode: confidence, threshold: 0.8}",
  "output:",
  '  total: "{{ steps.check.output.total }}"',
  "",
].join("\n");
