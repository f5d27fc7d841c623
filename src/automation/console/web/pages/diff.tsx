// A side-by-side diff of two versions' YAML (the diff code is a chunk loaded when the page opens).
import type { AutomationVersion } from "../../../client/index";
import type { DiffRow } from "../editor/side-by-side";
import { href } from "../router";
import { Page, Problem, Skeleton, useLoad, useSession } from "../ui";
import { label } from "./versions";

export function VersionDiff({ automation, left, right }: { automation: string; left: string | null; right: string | null }) {
  const { client } = useSession();
  const both = useLoad(async () => {
    if (!left || !right) throw new Error("Choose two versions to compare (a and b in the address).");
    const [a, b, m] = await Promise.all([client.automations.versions.get(automation, left), client.automations.versions.get(automation, right), import("../editor/side-by-side")]);
    return { a, b, rows: m.sideBySide(a.yaml, b.yaml) };
  }, [automation, left, right]);
  const d = both.data;
  const name = (v: AutomationVersion) => `${label(v)}${v.isCurrent ? " (current)" : ""}`;
  const changed = d ? d.rows.filter((r) => r.kind !== "same").length : 0;
  return (
    <Page title={d ? `${label(d.a)} → ${label(d.b)}` : "Compare versions"}>
      <p>
        <a href={href(["automations", automation, "versions"])}>Versions</a>
      </p>
      <Problem error={both.error} />
      {!d ? (
        both.error ? null : <Skeleton rows={10} />
      ) : (
        <>
          <p role="status">{changed === 0 ? "The two versions' YAML is the same." : `${changed} ${changed === 1 ? "line differs" : "lines differ"}.`}</p>
          <div class="table-wrap">
            <table class="diff" aria-label={`YAML of ${name(d.a)} beside ${name(d.b)}`}>
              <colgroup>
                <col class="ln" />
                <col />
                <col class="ln" />
                <col />
              </colgroup>
              <thead>
                <tr>
                  <th colSpan={2}>A: {name(d.a)}</th>
                  <th colSpan={2}>B: {name(d.b)}</th>
                </tr>
              </thead>
              <tbody>
                {d.rows.map((r, i) => (
                  <DiffLine key={i} row={r} />
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </Page>
  );
}

const MARK: Record<DiffRow["kind"], [string, string]> = { same: ["", ""], removed: ["−", ""], added: ["", "+"], changed: ["−", "+"] };

function DiffLine({ row }: { row: DiffRow }) {
  const [l, r] = MARK[row.kind];
  return (
    <tr class={`diff-${row.kind}`}>
      <td class="ln">{row.left?.n ?? ""}</td>
      <td class={`code ${row.left && row.kind !== "same" ? "del" : ""}`}>
        {l ? <span class="sr-only">removed: </span> : null}
        {row.left?.text ?? ""}
      </td>
      <td class="ln">{row.right?.n ?? ""}</td>
      <td class={`code ${row.right && row.kind !== "same" ? "add" : ""}`}>
        {r ? <span class="sr-only">added: </span> : null}
        {row.right?.text ?? ""}
      </td>
    </tr>
  );
}
