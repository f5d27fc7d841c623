// A button or a form that runs an action (useAction): busy while it runs, its outcome shown by the page.
import type { ComponentChildren } from "preact";

interface Action {
  busy: boolean;
  run(fn: () => Promise<string | void>): Promise<void>;
}

/**
 * A button that runs `run` through `action`, disabled while the action is busy (or when `disabled`).
 * With `confirm`, only after the person confirms that question (a refusal leaves the last outcome shown).
 */
export function ActionButton(props: { action: Action; run: () => Promise<string | void>; class?: string; disabled?: boolean; label?: string; confirm?: string; children: ComponentChildren }) {
  const { action, run, class: cls, disabled, label, children } = props;
  const click = () => {
    if (props.confirm !== undefined && !confirm(props.confirm)) return;
    void action.run(run);
  };
  return (
    <button type="button" class={cls} disabled={action.busy || disabled} aria-label={label} onClick={click}>
      {children}
    </button>
  );
}

/** A form whose submit runs `submit` through `action` instead of reloading the page. */
export function ActionForm({ action, submit, class: cls = "stack", children }: { action: Action; submit: () => Promise<string | void>; class?: string; children: ComponentChildren }) {
  return (
    <form
      class={cls}
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(submit);
      }}
    >
      {children}
    </form>
  );
}

/** A labelled checkbox whose change runs `onToggle(checked)` through `action`. */
export function ActionCheck({ action, id, checked, disabled, onToggle, children }: { action: Action; id: string; checked: boolean; disabled?: boolean; onToggle: (checked: boolean) => Promise<string | void>; children: ComponentChildren }) {
  return (
    <label class="check">
      <input
        type="checkbox"
        id={id}
        checked={checked}
        disabled={disabled || action.busy}
        onChange={(e) => {
          const on = e.currentTarget.checked;
          void action.run(() => onToggle(on));
        }}
      />{" "}
      {children}
    </label>
  );
}
