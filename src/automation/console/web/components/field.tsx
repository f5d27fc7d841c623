// Labelled form fields: the label's text, then the control inside the label (so the label names it).
// The control's other attributes (id, type, pattern, required, disabled, …) pass through unchanged.
import type { ComponentChildren } from "preact";
import { AutomationError } from "../api";

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

/** The messages of a refused save's issues that name `field`, for the message beside that field. */
export function issuesAt(err: unknown, field: string): string | undefined {
  if (!(err instanceof AutomationError)) return undefined;
  const found = err.issues.filter((i) => i.field === field);
  return found.length ? found.map((i) => i.message).join("; ") : undefined;
}

/** A refused save's error unless every issue of it is already shown beside its field. */
export function issuesElsewhere(err: unknown, shown: readonly string[]): unknown {
  if (!(err instanceof AutomationError)) return err;
  return err.issues.length && err.issues.every((i) => shown.includes(i.field)) ? null : err;
}

/** The server's issue beside the field it names (the field's aria-describedby points at `id`). */
export function FieldIssue({ id, text }: { id: string; text: string | undefined }) {
  return text ? (
    <span id={id} class="field-issue" role="alert">
      {text}
    </span>
  ) : null;
}

/**
 * A file field that also takes files dropped on it (the input then shows their names). `label` and
 * `children` (hints, the field's issue) go around the input; `onFiles` gets the chosen or dropped files.
 */
export function FileDrop({ id, name, label, multiple, required, described, onFiles, children }: { id: string; name: string; label: ComponentChildren; multiple?: boolean; required?: boolean; described?: string; onFiles(files: File[]): void; children?: ComponentChildren }) {
  return (
    <label
      for={id}
      class="file-drop"
      onDragOver={(e) => e.preventDefault()}
      onDrop={(e) => {
        e.preventDefault();
        const dropped = e.dataTransfer?.files;
        if (!dropped?.length) return;
        const el = document.getElementById(id) as HTMLInputElement | null;
        if (el) el.files = dropped;
        onFiles(Array.from(dropped));
      }}
    >
      {label} <span class="hint">{multiple ? "(choose or drop several files)" : "(choose or drop a file)"}</span>
      <input id={id} name={name} type="file" multiple={multiple} required={required} aria-describedby={described} onChange={(e) => onFiles(Array.from(e.currentTarget.files ?? []))} />
      {children}
    </label>
  );
}

/** A JSON field's text as its value: empty is null; text that is not JSON is an error naming `what`. */
export function parseJson(text: string, what: string): unknown {
  if (!text.trim()) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${what} is not valid JSON`);
  }
}
