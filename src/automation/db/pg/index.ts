// The PostgreSQL backend of the automation server: every converted feature's store over one pool.
import type { SQL } from "bun";
import type { AutomationStorage } from "../storage";
import { PgDatasetStore } from "./datasets";
import { PgEvaluatorStore } from "./evaluators";
import { PgExperimentStore } from "./experiments";
import { PgModelCallStore } from "./models";
import { PgReviewStore } from "./reviews";

/** Without `schedules` until the runs store is on PostgreSQL: a tick is claimed inside the run insert's transaction. */
export function pgStorage(pg: SQL): Omit<AutomationStorage, "schedules"> {
  return {
    backend: "postgres",
    evaluators: new PgEvaluatorStore(pg),
    datasets: new PgDatasetStore(pg),
    experiments: new PgExperimentStore(pg),
    reviews: new PgReviewStore(pg),
    models: new PgModelCallStore(pg),
  };
}
