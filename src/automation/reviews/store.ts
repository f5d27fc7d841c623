// What the runs feature still reads of reviews synchronously (the run-list filter and summary, the
// review ZIP bundle): re-exported from the SQLite storage until runs/ moves onto the async storage
// (issue 21), then this file goes.
export { reviewConditions, type ReviewFilter, SyncReviewReads as ReviewStore } from "../db/sqlite/reviews";
