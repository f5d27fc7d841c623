// The console's data table: a header row, one row per item, a notice when there is none, and
// placeholder rows of the final height while the items load (so the page does not jump).
import type { ComponentChildren, VNode } from "preact";
import { Notice, Skeleton } from "../ui";

export interface TableProps<T> {
  /** One header cell per column (text, or a node such as an sr-only label). */
  head: ComponentChildren[];
  rows: T[];
  /** The row (or rows) of one item; give it a `key`. */
  row: (item: T, index: number) => VNode;
  /** Shown as a notice instead of an empty table; without it an empty table is shown. */
  empty?: ComponentChildren;
  class?: string;
}

export function Table<T>({ head, rows, row, empty, class: cls }: TableProps<T>) {
  if (rows.length === 0 && empty !== undefined) return <Notice>{empty}</Notice>;
  return (
    <div class="table-wrap">
      <table class={cls}>
        <thead>
          <tr>
            {head.map((h, i) => (
              <th key={i} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{rows.map((r, i) => row(r, i))}</tbody>
      </table>
    </div>
  );
}

/** A table whose rows are still loading while `rows` is undefined: `skeleton` placeholder rows meanwhile. */
export function DataTable<T>({ rows, skeleton = 5, ...rest }: Omit<TableProps<T>, "rows"> & { rows: T[] | undefined; skeleton?: number }) {
  if (!rows) return <Skeleton rows={skeleton} />;
  return <Table rows={rows} {...rest} />;
}
