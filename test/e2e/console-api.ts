// The API calls the console's browser tests make beside the browser: a JSON request with the demo key,
// a poll until a condition holds, and a wait for a run's status. `base` is read per call (the server
// is started in beforeAll).
type Json = Record<string, any>; // biome-ignore lint: test assertions index freely into response bodies

export function consoleApi(base: () => string, key: string) {
  const api = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const r = await fetch(`${base()}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path} → ${r.status} ${text}`);
    return text ? (JSON.parse(text) as Json) : {};
  };
  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      const v = await probe();
      if (v !== undefined) return v;
      await Bun.sleep(100);
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  const runStatus = (id: string, wanted: string[]) =>
    until(`run ${id} ${wanted}`, async () => {
      const r = await api("GET", `/v1/runs/${id}`);
      return wanted.includes(r.execution.status) ? r : undefined;
    });
  return { api, until, runStatus };
}
