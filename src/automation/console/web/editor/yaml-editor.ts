// The YAML editor (CodeMirror 6), its own chunk: only the pages that edit YAML import it, with
// `import()`, so the first page load never carries it. Issues come from the server (the validate
// call), set here as diagnostics on their lines; completion offers the step kinds and their `with:`
// keys the server lists.
import { autocompletion, type CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import { yaml } from "@codemirror/lang-yaml";
import { lintGutter, setDiagnostics, type Diagnostic } from "@codemirror/lint";
import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { basicSetup } from "codemirror";

export interface EditorIssue {
  line?: number;
  message: string;
}

/** A step kind as `GET /v1/step-kinds` lists it: its `type` and the keys of its config. */
export interface KindInfo {
  type: string;
  configAt: "with" | "step";
  keys: { name: string; required: boolean }[];
}

export interface YamlEditor {
  view: EditorView;
  /** Marks each issue on its line (an issue without one on the first line). */
  showIssues(issues: EditorIssue[]): void;
  setKinds(kinds: KindInfo[]): void;
  destroy(): void;
}

/** The step kind named by the nearest `type:` line at or above `line` and at `indent` or less. */
function kindAbove(state: EditorState, lineNo: number): { kind: string; indent: number } | undefined {
  for (let n = lineNo; n >= 1; n--) {
    const text = state.doc.line(n).text;
    const m = /^(\s*)(?:- )?type:\s*([\w.-]+)/.exec(text);
    if (m) return { kind: m[2], indent: m[1].length };
    if (/^\s*- name:/.test(text) && n !== lineNo) {
      // the step's list item starts here: look below it, within the step, for its type
      for (let k = n + 1; k <= Math.min(state.doc.lines, n + 20); k++) {
        const below = /^(\s*)type:\s*([\w.-]+)/.exec(state.doc.line(k).text);
        if (below) return { kind: below[2], indent: below[1].length };
        if (/^\s*- /.test(state.doc.line(k).text)) break;
      }
      return undefined;
    }
  }
  return undefined;
}

function completer(kinds: () => KindInfo[]) {
  return (ctx: CompletionContext): CompletionResult | null => {
    const line = ctx.state.doc.lineAt(ctx.pos);
    const before = line.text.slice(0, ctx.pos - line.from);
    // `type: tr|`: the step kinds
    const typed = /(?:^|\s)type:\s*([\w.-]*)$/.exec(before);
    if (typed) {
      return {
        from: ctx.pos - typed[1].length,
        options: kinds().map((k) => ({ label: k.type, type: "keyword", detail: k.configAt === "with" ? "with:" : "step fields" })),
        validFor: /^[\w.-]*$/,
      };
    }
    // a key under `with:` (or a control step's own fields): that kind's config keys
    const key = /^(\s*)([\w-]*)$/.exec(before);
    if (!key || (!key[2] && !ctx.explicit && !key[1])) return null;
    const indent = key[1].length;
    let withLine = false;
    for (let n = line.number - 1; n >= 1; n--) {
      const t = ctx.state.doc.line(n).text;
      if (!t.trim()) continue;
      const ind = t.length - t.trimStart().length;
      if (ind < indent) {
        withLine = /^\s*with:\s*$/.test(t);
        break;
      }
    }
    const found = kindAbove(ctx.state, line.number - 1);
    if (!found) return null;
    const info = kinds().find((k) => k.type === found.kind);
    if (!info || (info.configAt === "with" && !withLine)) return null;
    return {
      from: ctx.pos - key[2].length,
      options: info.keys.map((k) => ({ label: k.name, apply: `${k.name}: `, type: "property", detail: k.required ? "required" : undefined })),
      validFor: /^[\w-]*$/,
    };
  };
}

// Inside a shadow root CodeMirror's styles go in as constructed style sheets (adoptedStyleSheets),
// which the console's CSP (`style-src 'self'`, no inline <style>) allows; in the page itself they
// would be a <style> element the CSP blocks. The look the page's style sheet cannot reach in there:
const look = EditorView.theme({
  "&": { minHeight: "24rem", fontSize: "0.9em" },
  "&.cm-focused": { outline: "2px solid #2f6fdf" },
  ".cm-scroller": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", minHeight: "24rem" },
});

export function mountYamlEditor(host: HTMLElement, opts: { doc: string; label: string; onChange(doc: string): void }): YamlEditor {
  let kinds: KindInfo[] = [];
  const root = host.shadowRoot ?? host.attachShadow({ mode: "open" });
  const parent = document.createElement("div");
  root.append(parent);
  const view = new EditorView({
    parent,
    root,
    state: EditorState.create({
      doc: opts.doc,
      extensions: [
        basicSetup,
        yaml(),
        lintGutter(),
        autocompletion({ override: [completer(() => kinds)] }),
        EditorState.tabSize.of(2),
        look,
        EditorView.contentAttributes.of({ "aria-label": opts.label, "aria-multiline": "true" }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged) opts.onChange(u.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    showIssues(issues) {
      const doc = view.state.doc;
      const diagnostics: Diagnostic[] = issues.map((i) => {
        const line = doc.line(Math.min(Math.max(i.line ?? 1, 1), doc.lines));
        return { from: line.from, to: Math.max(line.from, line.to), severity: "error", message: i.message };
      });
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
    setKinds(k) {
      kinds = k;
    },
    destroy() {
      view.destroy();
      parent.remove();
    },
  };
}
