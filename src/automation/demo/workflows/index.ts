// Example workflows `--demo` loads into the demo tenant, embedded in the executable. One YAML file per
// example; add a line per file. Together they show every step kind the engine has.
import callHttp from "./call-http.yaml" with { type: "text" };
import documentIntake from "./document-intake.yaml" with { type: "text" };
import greetTwice from "./greet-twice.yaml" with { type: "text" };
import hello from "./hello.yaml" with { type: "text" };
import invoiceApproval from "./invoice-approval.yaml" with { type: "text" };
import invoiceSummary from "./invoice-summary.yaml" with { type: "text" };
import invoiceDocument from "./invoice-document.yaml" with { type: "text" };
import invoiceEmail from "./invoice-email.yaml" with { type: "text" };
import orderRouting from "./order-routing.yaml" with { type: "text" };
import spreadsheetReport from "./spreadsheet-report.yaml" with { type: "text" };
import textTools from "./text-tools.yaml" with { type: "text" };

export const demoWorkflows: { file: string; yaml: string }[] = [
  { file: "hello.yaml", yaml: hello },
  { file: "invoice-summary.yaml", yaml: invoiceSummary },
  { file: "text-tools.yaml", yaml: textTools },
  { file: "order-routing.yaml", yaml: orderRouting },
  { file: "spreadsheet-report.yaml", yaml: spreadsheetReport },
  { file: "greet-twice.yaml", yaml: greetTwice },
  { file: "call-http.yaml", yaml: callHttp },
  { file: "invoice-approval.yaml", yaml: invoiceApproval },
  { file: "document-intake.yaml", yaml: documentIntake },
  { file: "invoice-document.yaml", yaml: invoiceDocument },
  { file: "invoice-email.yaml", yaml: invoiceEmail },
];
