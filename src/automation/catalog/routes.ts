// GET /models: the configured model catalog (any valid key may read it). The HTTP front of models/,
// which sits below the context (the context holds its gateway) and so cannot hold routes that read it.
import { Elysia } from "elysia";
import type { AutomationContext } from "../context";
import { parseWith } from "../http/validate";
import { authPlugin } from "../tenancy/auth";
import { catalog } from "../models/catalog";
import { catalogQuery } from "./model";

export const modelsRoutes = (ctx: AutomationContext) =>
  new Elysia().use(authPlugin(ctx)).get(
    "/models",
    ({ query }) => {
      const q = parseWith(catalogQuery, query);
      return { data: catalog(ctx.config.models, q.capability) };
    },
    { detail: { summary: "List configured models", description: "Health comes from local configuration, never from a live probe.", tags: ["Models"] } },
  );
