// Human review: the queue of pending tasks, oldest first, paged.
import { Pager } from "../components/pager";
import { DataTable } from "../components/table";
import { href } from "../router";
import { Page, Problem, Time, useLoad, useSession } from "../ui";

// The Files page still takes its upload keys from here (they moved to api.ts).
export { newActionKey } from "../api";

export function HumanReviewQueue({ query }: { query: URLSearchParams }) {
  const { client } = useSession();
  const automationId = query.get("automation_id") ?? undefined;
  const cursor = query.get("cursor") ?? undefined;
  const list = useLoad(() => client.humanReviews.list({ automationId, cursor, limit: 50 }), [automationId, cursor]);
  return (
    <Page title="Human review">
      <p class="muted">Pending tasks, oldest first. A run waits until its task is approved or rejected.</p>
      <Problem error={list.error} />
      <DataTable
        rows={list.data?.tasks}
        skeleton={6}
        empty="No task waits for a review."
        head={["Task", "Automation", "Step", "Fields to check", "Waiting since", "Run"]}
        row={(t) => (
          <tr key={t.id}>
            <td>
              <a href={href(["human-reviews", t.id])}>{t.id}</a>
            </td>
            <td>{t.automationName}</td>
            <td>{t.sourceLabel}</td>
            <td>
              {t.confirmedCount} of {t.requiredCount} confirmed
            </td>
            <td>
              <Time iso={t.createdAt} />
            </td>
            <td>
              <a href={href(["runs", t.executionId])}>{t.executionId}</a>
            </td>
          </tr>
        )}
      />
      <Pager
        back={cursor ? <a href={href(["human-reviews"], { automation_id: automationId })}>First page</a> : null}
        on={list.data?.nextCursor ? <a href={href(["human-reviews"], { automation_id: automationId, cursor: list.data.nextCursor })}>Next page</a> : null}
      />
    </Page>
  );
}
