// A list's filter form: its fields, then the buttons row; submitting never reloads the page.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

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
  const [draft, setDraft] = useState<Record<string, string>>(() => Object.fromEntries(query.entries()));
  useEffect(() => setDraft(Object.fromEntries(new URLSearchParams(key).entries())), [key]);
  return { draft, set: (k, v) => setDraft((d) => ({ ...d, [k]: v })), clear: () => setDraft({}) };
}
