// The registry: all twelve providers in display order, and name/alias lookup.
import { identify } from "../model/names";
import { antigravity } from "./antigravity";
import { claude } from "./claude";
import { codex } from "./codex";
import { copilot } from "./copilot";
import { cursor } from "./cursor";
import { deepseek } from "./deepseek";
import { grok } from "./grok";
import { kimi } from "./kimi";
import { minimax } from "./minimax";
import { openrouter } from "./openrouter";
import type { ProviderDef } from "./provider";
import { siliconflow } from "./siliconflow";
import { zai } from "./zai";

export const providers: ProviderDef[] = [claude, codex, antigravity, copilot, cursor, zai, kimi, minimax, deepseek, siliconflow, openrouter, grok];

const byId = new Map(providers.map((p) => [p.id, p]));

/** A provider by canonical name or alias (case-insensitive). */
export function lookup(name: string): ProviderDef | undefined {
  const id = identify(name)?.id;
  return id ? byId.get(id) : undefined;
}

export { providerNames } from "../model/names";
