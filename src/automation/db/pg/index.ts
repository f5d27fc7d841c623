// The PostgreSQL backend of the automation server: every converted feature's store over one pool.
import type { SQL } from "bun";
import type { AutomationStorage } from "../storage";
import { PgDatasetStore } from "./datasets";
import { PgEvaluatorStore } from "./evaluators";
import { PgExperimentStore } from "./experiments";
import { PgModelCallStore } from "./models";
import { PgReviewStore } from "./reviews";

export function pgStorage(pg: SQL): AutomationStorage {
  return {
    backend: "postgres",
    evaluators: new PgEvaluatorStore(pg),
    datasets: new PgDatasetStore(pg),
    experiments: new PgExperimentStore(pg),
    reviews: new PgReviewStore(pg),
    models: new PgModelCallStore(pg),
  };
}
