// The step kinds a hand-written workflow may use, with the keys of each kind's config, read from the
// same valibot schemas the parser validates with: the console's editor completes from this list.
import { toJsonSchema } from "@valibot/to-json-schema";
import { stepKinds } from "../engine/registry";

export interface StepKindInfo {
  type: string;
  /** `with`: the keys go under the step's `with:`; `step`: control kinds keep them on the step itself. */
  configAt: "with" | "step";
  keys: { name: string; required: boolean }[];
}

type Json = { properties?: Record<string, unknown>; required?: string[]; anyOf?: Json[]; oneOf?: Json[] };

function keysOf(s: Json): StepKindInfo["keys"] {
  const required = new Set(s.required ?? []);
  const names = new Set(Object.keys(s.properties ?? {}));
  // A config that is one of several shapes offers the keys of all of them.
  for (const alt of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) for (const k of Object.keys(alt.properties ?? {})) names.add(k);
  return [...names].map((name) => ({ name, required: required.has(name) }));
}

let cached: StepKindInfo[] | undefined;

export function stepKindInfo(): StepKindInfo[] {
  return (cached ??= [...stepKinds.values()]
    .filter((k) => !k.internal)
    .map((k) => ({ type: k.type, configAt: k.configAt, keys: keysOf(toJsonSchema(k.schema as Parameters<typeof toJsonSchema>[0], { errorMode: "ignore" }) as Json) })));
}
