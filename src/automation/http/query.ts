// The Python SDK forwards snake_case query names verbatim: every snake_case name also answers to its
// camelCase twin (`review_status` = `reviewStatus`). The camelCase spelling wins when both are sent.
export function camelize(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function aliasQuery(query: Record<string, unknown>): void {
  for (const key of Object.keys(query)) {
    if (!key.includes("_")) continue;
    const camel = camelize(key);
    if (camel !== key && query[camel] === undefined) query[camel] = query[key];
  }
}
