// A secret shown once (an invitation link, a new API key): the value, selectable, with a copy button.
// The server keeps only its hash, so this is the one chance to take it.
import { useState } from "preact/hooks";

export function ShownOnce({ label, value, note }: { label: string; value: string; note: string }) {
  const [copied, setCopied] = useState<boolean | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
    } catch {
      setCopied(false); // no clipboard permission (plain http on another host): the text is selectable
    }
  };
  return (
    <div class="once" role="status">
      <label>
        {label}
        <input class="mono" type="text" readOnly value={value} data-testid="shown-once" onFocus={(e) => e.currentTarget.select()} />
      </label>
      <div class="actions">
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        {copied === true ? <span class="muted">Copied.</span> : copied === false ? <span class="muted">Copying is not allowed here: select the text and copy it.</span> : null}
      </div>
      <p class="hint">{note}</p>
    </div>
  );
}
