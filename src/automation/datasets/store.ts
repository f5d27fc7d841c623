// What datasets need from storage: examples, their input/expected files and the files' blob pins.
// One async interface; db/sqlite/datasets.ts and db/pg/datasets.ts implement it. This module imports no implementation.

/** A dataset example; JSON fields hold the wire values as text (the service parses them). */
export interface ExampleRow {
  id: string;
  tenantId: string;
  automationId: string;
  automationType: string;
  name: string;
  input: string | null;
  expected: string | null;
  metadata: string | null;
  annotation: string | null;
  rowOrder: number | null;
  overrides: string | null;
  latestRunId: string | null;
  createdAt: string;
  updatedAt: string;
}

export type Folder = "input" | "expected";

export interface ExampleFileRow {
  exampleId: string;
  folder: Folder;
  path: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: string;
}

/** The blob-pin owner of an example's files. */
export const examplePin = (exampleId: string) => `example:${exampleId}`;

/** A new example with its files (bytes already in the blob store). */
export interface NewExample {
  row: ExampleRow;
  files: ExampleFileRow[];
}

/**
 * Dataset examples and their input/expected files. An example holds one blob pin (`examplePin`) per
 * stored blob its files use; the writes here keep files and pins together in one transaction.
 */
export interface DatasetStore {
  get(tenantId: string, automationId: string, id: string): Promise<ExampleRow | undefined>;
  byId(id: string): Promise<ExampleRow | undefined>;
  /** One page in display order: rowOrder first (nulls last), then creation. */
  list(tenantId: string, automationId: string, limit: number, offset: number): Promise<ExampleRow[]>;
  all(tenantId: string, automationId: string): Promise<ExampleRow[]>;
  count(tenantId: string, automationId: string): Promise<number>;
  files(exampleId: string, folder?: Folder): Promise<ExampleFileRow[]>;
  file(exampleId: string, folder: Folder, path: string): Promise<ExampleFileRow | undefined>;
  /**
   * Inserts examples with their files, pinning each file's blob for its example, all or nothing.
   * `replace` first removes every example of that automation (returned, with their file count).
   * "name_taken" (nothing written) when an example of the automation already has one of the names.
   */
  create(tenantId: string, examples: NewExample[], replace?: { automationId: string }): Promise<{ removed: string[]; filesRemoved: number } | "name_taken">;
  /** Writes the editable fields; "name_taken" when another example of the automation has the name. */
  update(row: ExampleRow): Promise<"ok" | "name_taken">;
  setLatestRun(id: string, runId: string): Promise<void>;
  /** Deletes the example and its files (its blob pins are the caller's to release). */
  remove(id: string): Promise<void>;
  /** Inserts or replaces files (pinning their blobs); returns the blobs of the files replaced. */
  putFiles(tenantId: string, files: ExampleFileRow[]): Promise<string[]>;
  /** "exists" (nothing changed) when the target path is taken. */
  renameFile(exampleId: string, folder: Folder, from: string, to: string): Promise<"ok" | "exists">;
  removeFile(exampleId: string, folder: Folder, path: string): Promise<void>;
  /** Drops the example's pin on the blob unless one of its files still uses it; returns whether it did. */
  unpinIfUnused(exampleId: string, sha256: string): Promise<boolean>;
}
