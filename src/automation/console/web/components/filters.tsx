// A list's filter form: its fields, then the buttons row; submitting never reloads the page.
import type { ComponentChildren } from "preact";
import { useRef, useState } from "preact/hooks";

export function FilterForm({ label, role, onApply, buttons, children }: { label?: string; role?: "search"; onApply?: () => void; buttons?: ComponentChildren; children: ComponentChildren }) {
  return (
    <form
      class="filters"
      role={role}
      aria-label={label}
      onSubmit={(e) => {
        e.preventDefault();
        onApply?.();
      }}
    >
      {children}
      {buttons ? <div class="filter-buttons">{buttons}</div> : null}
    </form>
  );
}

/**
 * The draft of a filter form bound to the address: after a menu link, Clear, Back or a shared link it
 * shows the filters the list was loaded with, so the next Apply does not send a filter the address no
 * longer has.
 */
export function useAddressDraft(query: URLSearchParams): { draft: Record<string, string>; set(k: string, v: string): void; clear(): void } {
  const key = query.toString();
  // Reset in the same render as the address changes (not in an effect after it), so nothing can be read
  // or submitted in between with the old address's filters.
  const held = useRef({ key, draft: Object.fromEntries(query.entries()) });
  if (held.current.key !== key) held.current = { key, draft: Object.fromEntries(query.entries()) };
  const [, rerender] = useState(0);
  const change = (draft: Record<string, string>) => {
    held.current = { key: held.current.key, draft };
    rerender((n) => n + 1);
  };
  return { draft: held.current.draft, set: (k, v) => change({ ...held.current.draft, [k]: v }), clear: () => change({}) };
}
