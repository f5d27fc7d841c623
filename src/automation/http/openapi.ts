// This server's OpenAPI document. Elysia's generator replaces a route's documented `parameters` with
// the path parameters it infers, so the query parameters of routes like GET /automations/{id}/versions
// were lost; here the documented ones are put back, the inferred path parameters kept beside them.
import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";

interface Parameter {
  name: string;
  in: string;
}
type Operation = { parameters?: Parameter[] } & Record<string, unknown>;

const info = { title: "automation-server", version: "1.0.0", description: "Self-hosted workflow automation API." };

const key = (p: Parameter) => `${p.in}:${p.name}`;

/** Builds the document from the app's routes; call once the app has all its routes. */
export function openApiDocument(app: AnyElysia) {
  const { paths, components } = toOpenAPISchema(app) as {
    paths: Record<string, Record<string, Operation>>;
    components: { schemas?: Record<string, unknown> };
  };
  for (const route of app.routes) {
    const documented = (route.hooks as { detail?: { parameters?: Parameter[] } } | undefined)?.detail?.parameters;
    if (!documented?.length) continue;
    const op = paths[route.path.replace(/:([^/]+)/g, "{$1}")]?.[route.method.toLowerCase()];
    if (!op) continue;
    const given = new Set(documented.map(key));
    op.parameters = [...documented, ...(op.parameters ?? []).filter((p) => !given.has(key(p)))];
  }
  return {
    openapi: "3.1.2",
    info,
    components: { schemas: components.schemas ?? {}, securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "API key: `Authorization: Bearer <key>`" } } },
    security: [{ bearerAuth: [] }],
    paths,
  };
}
