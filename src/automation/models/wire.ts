// What the two wire formats share: the request they build, the result they read, and lenient readers
// for provider JSON (a missing usage field counts 0 rather than failing a paid-for answer).
import type { ModelToolCall, ModelUsage } from "./contract";

export interface WireCall {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export interface WireResult {
  text: string;
  toolCalls: ModelToolCall[];
  usage: ModelUsage;
  finishReason?: string;
}

/** The provider answered 2xx with a body this format cannot read. */
export class WireError extends Error {}

export const obj = (x: unknown): Record<string, unknown> => (x !== null && typeof x === "object" && !Array.isArray(x) ? (x as Record<string, unknown>) : {});
export const str = (x: unknown): string => (typeof x === "string" ? x : "");
export const num = (x: unknown): number => (typeof x === "number" && Number.isFinite(x) ? x : 0);

/** Tool arguments arrive as a JSON string (OpenAI) that a model may get wrong. */
export function parseArgs(raw: unknown): Record<string, unknown> {
  if (typeof raw !== "string") return obj(raw);
  try {
    return obj(JSON.parse(raw));
  } catch {
    throw new WireError(`tool call arguments are not valid JSON: ${raw.slice(0, 200)}`);
  }
}
