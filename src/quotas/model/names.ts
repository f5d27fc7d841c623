// Provider identities (id, display name, aliases) without their code: the statusline's fast path needs
// names and aliases but must not load the providers themselves.
export interface Identity {
  id: string;
  name: string;
  aliases: string[];
}

export const identities: Identity[] = [
  { id: "claude", name: "Claude", aliases: ["anthropic"] },
  { id: "codex", name: "Codex", aliases: ["openai", "chatgpt"] },
  { id: "antigravity", name: "Antigravity", aliases: ["gemini", "agy"] },
  { id: "copilot", name: "GitHub Copilot", aliases: ["github-copilot"] },
  { id: "cursor", name: "Cursor", aliases: [] },
  { id: "zai", name: "Z.ai", aliases: ["glm", "zhipu"] },
  { id: "kimi", name: "Kimi", aliases: ["moonshot"] },
  { id: "minimax", name: "MiniMax", aliases: [] },
  { id: "deepseek", name: "DeepSeek", aliases: [] },
  { id: "siliconflow", name: "SiliconFlow", aliases: [] },
  { id: "openrouter", name: "OpenRouter", aliases: [] },
  { id: "grok", name: "Grok", aliases: ["xai"] },
];

const byName = new Map<string, Identity>();
for (const p of identities) {
  byName.set(p.id, p);
  for (const a of p.aliases) byName.set(a, p);
}

/** Canonical identity for a name or alias (case-insensitive). */
export function identify(name: string): Identity | undefined {
  return byName.get(name.trim().toLowerCase());
}

export function ident(id: string): Identity {
  const p = byName.get(id);
  if (!p) throw new Error(`no provider ${id}`);
  return p;
}

export const providerNames = identities.map((p) => p.id);
