// A list's page links (or buttons): back, where the list stands, on. A missing one keeps its place empty.
import type { ComponentChildren } from "preact";

export function Pager({ back, at, on }: { back?: ComponentChildren; at?: ComponentChildren; on?: ComponentChildren }) {
  return (
    <nav class="pager" aria-label="Pages">
      {back || <span />}
      {at}
      {on || <span />}
    </nav>
  );
}
