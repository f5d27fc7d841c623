// Example workflows `--demo` loads into the demo tenant, embedded in the executable. One YAML file per
// example; add a line per file.
import hello from "./hello.yaml" with { type: "text" };
import invoiceSummary from "./invoice-summary.yaml" with { type: "text" };

export const demoWorkflows: { file: string; yaml: string }[] = [
  { file: "hello.yaml", yaml: hello },
  { file: "invoice-summary.yaml", yaml: invoiceSummary },
];
