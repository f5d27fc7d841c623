// Wire schemas of dataset examples and their files (valibot), and the example's wire shape.
import * as v from "valibot";
import { INT32_MAX, pageQuery, wholeNumber } from "../http/validate";

export const EXAMPLE_NAME = /^[a-z0-9][a-z0-9_-]*$/;
export const Name = v.pipe(
  v.string("name must be a string"),
  v.maxLength(128, "name is at most 128 characters"),
  v.regex(EXAMPLE_NAME, "name must be lowercase letters, digits, - or _, starting with a letter or digit"),
);
const Obj = v.record(v.string(), v.unknown());
const nullable = <S extends v.GenericSchema>(s: S) => v.optional(v.nullable(s));

const fields = {
  name: nullable(Name),
  input: nullable(Obj),
  expected: v.optional(v.unknown()),
  metadata: nullable(Obj),
  annotation: nullable(v.pipe(v.string(), v.maxLength(2000, "annotation is at most 2000 characters"))),
  rowOrder: nullable(wholeNumber("rowOrder", 0, INT32_MAX)),
  overrides: nullable(Obj),
};
/** Create and PATCH share the fields; PATCH keeps omitted ones, `null` clears nullable ones. */
export const ExampleBody = v.strictObject(fields);
export type ExampleBody = v.InferOutput<typeof ExampleBody>;

export const ListExamplesQuery = v.object({
  ...pageQuery,
  include: v.optional(v.picklist(["full", "metadata"], "include must be full or metadata"), "full"),
});

export const RenameBody = v.strictObject({ newFilename: v.string("newFilename is required") });

export interface ExampleView {
  id: string;
  name: string;
  automationId: string;
  automationType: string;
  input?: Record<string, unknown> | null;
  expected?: unknown;
  expectedFiles: { name: string; url: string }[];
  metadata: Record<string, unknown> | null;
  annotation: string | null;
  rowOrder: number | null;
  overrides: Record<string, unknown> | null;
  latestRunId: string | null;
  createdAt: string;
  updatedAt: string;
}
