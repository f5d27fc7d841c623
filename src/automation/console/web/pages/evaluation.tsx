// Evaluation: per automation, links to its dataset, evaluators, experiments and review health.
import { DataTable } from "../components/table";
import { href } from "../router";
import { Page, Problem, useLoad, useSession } from "../ui";

/** The evaluation pages of an automation, as a row links to them: the path's last part, the link's text. */
const PAGES = [
  ["dataset", "Dataset"],
  ["evaluators", "Evaluators"],
  ["experiments", "Experiments"],
  ["health", "Health"],
] as const;

export function Evaluation() {
  const { client } = useSession();
  const list = useLoad(() => client.automations.list({ limit: 100 }), []);
  return (
    <Page title="Evaluation">
      <p class="muted">Datasets, evaluators, experiments and review health, per automation.</p>
      <Problem error={list.error} />
      <DataTable
        rows={list.data?.data}
        skeleton={6}
        head={["Automation", "Dataset", "Evaluators", "Experiments", "Review health"]}
        row={(a) => (
          <tr key={a.id}>
            <td>
              <a href={href(["automations", a.id])}>{a.slug}</a>
            </td>
            {PAGES.map(([page, text]) => (
              <td key={page}>
                <a href={href(["automations", a.id, page])}>
                  {text} <span class="sr-only">of {a.slug}</span>
                </a>
              </td>
            ))}
          </tr>
        )}
      />
    </Page>
  );
}
