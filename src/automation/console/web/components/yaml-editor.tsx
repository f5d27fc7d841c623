// Workflow YAML in a code editor, checked by the server as the person types: the editor (CodeMirror,
// its own chunk) is imported only when this component mounts, and each pause in typing sends the text
// to `POST /v1/automations/validate`, which stores nothing; its issues are marked on their lines in the
// editor and listed under it.
import { useEffect, useRef, useState } from "preact/hooks";
import type { ValidationResult } from "../../../client/index";
import { errorText, type Session } from "../api";
import { useSession } from "../ui";
import type { KindInfo, YamlEditor } from "../editor/yaml-editor";

const PAUSE_MS = 350;

let kinds: Promise<KindInfo[]> | undefined;
const kindsOf = (session: Session) => (kinds ??= session.client.automations.stepKinds().then((r) => r.data, () => []));

interface Props {
  /** The text the editor starts with (later changes come from the editor). */
  initial: string;
  label: string;
  /** Validate as a new version of this automation; absent: as a new workflow. */
  automation?: string;
  onValue(yaml: string): void;
  /** The latest answer of the server for the text as it is now (null while it is being checked). */
  onResult(result: ValidationResult | null): void;
}

/**
 * While `dirty`, leaving the page asks first: a reload or a closed tab (beforeunload), and a click on a
 * link to another console page (checked before the hash changes, so "Stay" keeps the text).
 */
export function useLeaveGuard(dirty: boolean, question = "Leave this page? The YAML you typed is not saved."): void {
  useEffect(() => {
    if (!dirty) return;
    const unload = (e: BeforeUnloadEvent) => e.preventDefault();
    const click = (e: MouseEvent) => {
      const a = (e.target as Element | null)?.closest?.("a[href]");
      if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
      const to = a.getAttribute("href") ?? "";
      if (!to.startsWith("#/") || to === location.hash) return;
      if (!confirm(question)) e.preventDefault();
    };
    addEventListener("beforeunload", unload);
    document.addEventListener("click", click, true);
    return () => {
      removeEventListener("beforeunload", unload);
      document.removeEventListener("click", click, true);
    };
  }, [dirty, question]);
}

export function YamlEditorField({ initial, label, automation, onValue, onResult }: Props) {
  const session = useSession();
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<YamlEditor | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [ready, setReady] = useState(false);
  const [result, setResult] = useState<ValidationResult | null>(null);
  const [checkError, setCheckError] = useState<unknown>(null);
  const [checking, setChecking] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const inflight = useRef<AbortController | null>(null);

  const check = (yaml: string) => {
    clearTimeout(timer.current);
    inflight.current?.abort();
    onResult(null);
    setChecking(true);
    timer.current = setTimeout(() => {
      const ctl = new AbortController();
      inflight.current = ctl;
      session.client.automations.validate(yaml, automation, { signal: ctl.signal }).then(
        (r) => {
          if (ctl.signal.aborted) return;
          setResult(r);
          setCheckError(null);
          setChecking(false);
          editor.current?.showIssues(r.issues);
          onResult(r);
        },
        (err) => {
          if (ctl.signal.aborted) return;
          setCheckError(err);
          setChecking(false);
        },
      );
    }, PAUSE_MS);
  };

  useEffect(() => {
    let gone = false;
    import("../editor/yaml-editor").then(
      (m) => {
        if (gone || !host.current) return;
        editor.current = m.mountYamlEditor(host.current, {
          doc: initial,
          label,
          onChange: (doc) => {
            onValue(doc);
            check(doc);
          },
        });
        setReady(true);
        void kindsOf(session).then((k) => editor.current?.setKinds(k));
        check(initial);
      },
      (err) => setLoadError(err),
    );
    return () => {
      gone = true;
      clearTimeout(timer.current);
      inflight.current?.abort();
      editor.current?.destroy();
      editor.current = null;
    };
  }, []);

  const issues = result?.issues ?? [];
  return (
    <div class="yaml-editor">
      <div class="editor-label" id="yaml-editor-label">
        {label}
      </div>
      {/* the editor mounts in this element's shadow root: nothing else goes inside it */}
      <div ref={host} class="editor-host" aria-busy={ready || loadError ? undefined : "true"} />
      {loadError ? <p class="problem">The editor did not load: {errorText(loadError)}</p> : null}
      <div class="editor-issues" role="status" aria-live="polite" aria-label="Validation">
        {checkError ? (
          <p class="problem">Could not check the YAML: {errorText(checkError)}</p>
        ) : checking || !result ? (
          <p class="muted">Checking…</p>
        ) : issues.length === 0 ? (
          <p class="ok-text">No issues: the server accepts this YAML.</p>
        ) : (
          <>
            <p class="problem-text">
              {issues.length} {issues.length === 1 ? "issue" : "issues"}:
            </p>
            <ul class="issues">
              {issues.map((i, n) => (
                <li key={n} data-line={i.line ?? ""}>
                  {i.line ? (
                    <button type="button" class="link" onClick={() => editor.current && goToLine(editor.current, i.line!)}>
                      Line {i.line}
                    </button>
                  ) : (
                    <span>{i.field}</span>
                  )}
                  : {i.message}
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
    </div>
  );
}

function goToLine(e: YamlEditor, line: number): void {
  const doc = e.view.state.doc;
  const at = doc.line(Math.min(Math.max(line, 1), doc.lines)).from;
  e.view.dispatch({ selection: { anchor: at }, scrollIntoView: true });
  e.view.focus();
}
