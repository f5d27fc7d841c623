// Moved to tables/foundation.ts; this re-export keeps runs/sources.ts (converted by the runs helper) compiling until the merge.
export * from "./tables/foundation";
