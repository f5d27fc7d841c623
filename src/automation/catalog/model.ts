// Wire schemas of the model catalog.
import * as v from "valibot";
import { CAPABILITIES } from "../models/config";

export const catalogQuery = v.object({
  capability: v.optional(v.picklist(CAPABILITIES, `capability must be one of ${CAPABILITIES.join(", ")}`)),
});
