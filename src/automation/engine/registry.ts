// The one place step kinds are registered; the parser (known kinds, config schemas, nested step lists)
// and the engine read only this map. A new kind is four things: a module under kinds/ (defineKind with
// its valibot schema), one line here, a step using it in a demo workflow (src/automation/demo/workflows/:
// test/automation/runs/demo.test.ts fails while a registered kind is in no demo), and a row in the
// step-kind table of docs/automation/runs.md (the one table of every kind, linking to the details;
// test/house/docs.test.ts fails while a registered kind is not in it).
import type { AnyStepKind } from "./kind";
import { agentKinds } from "./kinds/agent";
import aiClassify from "./kinds/ai-classify";
import aiExtract from "./kinds/ai-extract";
import aiParse from "./kinds/ai-parse";
import aiSplit from "./kinds/ai-split";
import invokeWorkflow from "./kinds/action-invoke-workflow";
import http from "./kinds/action-http";
import email from "./kinds/action-email";
import controlFail from "./kinds/control-fail";
import controlHumanReview from "./kinds/control-human-review";
import controlIf from "./kinds/control-if";
import controlParallel from "./kinds/control-parallel";
import controlSwitch from "./kinds/control-switch";
import controlWait from "./kinds/control-wait";
import { foreach, parallelMap } from "./kinds/loop";
import combine from "./kinds/transform-combine";
import jsonToXlsx from "./kinds/transform-json-to-xlsx";
import regexExtract from "./kinds/transform-regex-extract";
import remove from "./kinds/transform-remove";
import script from "./kinds/transform-script";
import set from "./kinds/transform-set";
import split from "./kinds/transform-split";
import template from "./kinds/transform-template";
import textChunker from "./kinds/transform-text-chunker";
import xlsxToJson from "./kinds/transform-xlsx-to-json";

const kinds: AnyStepKind[] = [
  set,
  remove,
  combine,
  split,
  script,
  regexExtract,
  textChunker,
  jsonToXlsx,
  xlsxToJson,
  template,
  http,
  email,
  invokeWorkflow,
  controlIf,
  controlSwitch,
  foreach,
  parallelMap,
  controlParallel,
  controlWait,
  controlFail,
  controlHumanReview,
  ...agentKinds,
  aiParse,
  aiExtract,
  aiClassify,
  aiSplit,
];

export const stepKinds: ReadonlyMap<string, AnyStepKind> = new Map(kinds.map((k) => [k.type, k]));

export function stepKind(type: string): AnyStepKind | undefined {
  return stepKinds.get(type);
}
