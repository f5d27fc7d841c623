// Hash routes: every page has a URL to share (`/#/runs/run_…?…`), the server only ever serves `/`,
// and nothing after `#` reaches the server or its logs (the demo sign-in link relies on that).
import { useEffect, useState } from "preact/hooks";

export interface Route {
  /** Path segments after `#/`, decoded. */
  parts: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, "");
  const q = raw.indexOf("?");
  const path = q === -1 ? raw : raw.slice(0, q);
  return {
    parts: path.split("/").filter(Boolean).map((s) => decodeURIComponent(s)),
    query: new URLSearchParams(q === -1 ? "" : raw.slice(q + 1)),
  };
}

/** `#/a/b?x=1` from segments (encoded) and a query (empty values dropped). */
export function href(parts: string[], query: Record<string, string | number | undefined | null> = {}): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") qs.set(k, String(v));
  const s = qs.toString();
  return `#/${parts.map(encodeURIComponent).join("/")}${s ? `?${s}` : ""}`;
}

export function go(to: string): void {
  location.hash = to;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}
