// Labelled form fields: the label's text, then the control inside the label (so the label names it).
// The control's other attributes (id, type, pattern, required, disabled, …) pass through unchanged.
import type { ComponentChildren } from "preact";

interface Props {
  label: ComponentChildren;
  value: string;
  onValue(value: string): void;
  id?: string;
  disabled?: boolean;
  required?: boolean;
}

export function TextField({ label, value, onValue, type, ...rest }: Props & { type?: "text" | "search" | "date"; placeholder?: string; pattern?: string; maxLength?: number }) {
  return (
    <label>
      {label}
      {/* the cast: preact types `type` per value; this field only takes text-like ones */}
      <input {...rest} type={type as "text"} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
    </label>
  );
}

/** A textarea for JSON or YAML: monospace, no spell checking. */
export function CodeField({ label, value, onValue, ...rest }: Props & { rows: number; readOnly?: boolean }) {
  return (
    <label>
      {label}
      <textarea class="code" spellcheck={false} {...rest} value={value} onInput={(e) => onValue(e.currentTarget.value)} />
    </label>
  );
}

/** A select; an option is its value (shown as is) or a [value, text] pair. */
export function SelectField({ label, value, onValue, options, ...rest }: Props & { options: readonly (string | readonly [string, string])[] }) {
  return (
    <label>
      {label}
      <select {...rest} value={value} onChange={(e) => onValue(e.currentTarget.value)}>
        {options.map((o) => {
          const [v, text] = typeof o === "string" ? [o, o] : o;
          return (
            <option key={v} value={v}>
              {text}
            </option>
          );
        })}
      </select>
    </label>
  );
}
