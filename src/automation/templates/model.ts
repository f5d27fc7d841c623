// Wire shapes of the templates API.
import * as v from "valibot";
import { pageQuery } from "../http/validate";
import type { Grammar, TemplateFormat, Token } from "./grammar";

/** Largest template file accepted. */
export const TEMPLATE_MAX_BYTES = 50 * 1024 * 1024;

const name = v.pipe(v.string(), v.trim(), v.minLength(1, "name must not be empty"), v.maxLength(200));
const description = v.nullish(v.pipe(v.string(), v.maxLength(2000)));
const fileId = v.pipe(v.string(), v.regex(/^file_[0-9a-z]+$/, "must be a file id (file_...)"));

export const CreateTemplateBody = v.strictObject({ fileId, name, description });
export const ReplaceTemplateBody = v.strictObject({ fileId });
export const TemplateMeta = v.strictObject({ name, description });
export const ListTemplatesQuery = v.object(pageQuery);
export const ContentQuery = v.object({ revisionId: v.optional(v.pipe(v.string(), v.minLength(1))) });

export interface RevisionView {
  id: string;
  number: number;
  sha256: string;
  createdAt: string;
}

export interface TemplateView {
  id: string;
  name: string;
  description: string | null;
  filename: string;
  format: TemplateFormat;
  mimeType: string;
  size: number;
  sha256: string;
  tokens: Token[];
  grammar: Grammar;
  currentRevision: RevisionView;
  createdAt: string;
  updatedAt: string;
}
