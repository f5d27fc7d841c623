// The PostgreSQL backend of the automation server: every converted feature's store over one pool.
import type { SQL } from "bun";
import type { AutomationStorage } from "../storage";
import { PgAgentStore } from "./agents";
import { PgDatasetStore } from "./datasets";
import { PgEvaluatorStore } from "./evaluators";
import { PgExperimentStore } from "./experiments";
import { PgInboundStore } from "./inbound";
import { PgModelCallStore } from "./models";
import { PgReviewStore } from "./reviews";
import { PgRunStore } from "./runs";
import { PgScheduleStore } from "./schedules";
import { PgTemplateStore } from "./templates";

/** The stores that move runs (schedules claim ticks in the run insert, human review parks and requeues runs) come with the runs store. */
export type PgStorageSoFar = Omit<AutomationStorage, "humanReview">;

export function pgStorage(pg: SQL): PgStorageSoFar {
  return {
    backend: "postgres",
    runs: new PgRunStore(pg),
    schedules: new PgScheduleStore(pg),
    templates: new PgTemplateStore(pg),
    evaluators: new PgEvaluatorStore(pg),
    datasets: new PgDatasetStore(pg),
    experiments: new PgExperimentStore(pg),
    reviews: new PgReviewStore(pg),
    models: new PgModelCallStore(pg),
    agents: new PgAgentStore(pg),
    // Its exactly-once key is written by the run insert, which comes to PostgreSQL with the runs store.
    inbound: new PgInboundStore(pg),
  };
}
