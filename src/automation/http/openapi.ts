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

const info = {
  title: "automation-server",
  version: "1.0.0",
  description: "Self-hosted workflow automation API.",
  license: { name: "MIT", identifier: "MIT" },
};

const key = (p: Parameter) => `${p.in}:${p.name}`;

/**
 * The document's one server: --public-url when the server was given one (so a document saved to disk
 * still names the server), else `/`, which a client resolves against the address it fetched the
 * document from (right for any host, port or proxy without configuration).
 */
export function serversFor(publicUrl?: string) {
  return publicUrl ? [{ url: publicUrl, description: "--public-url" }] : [{ url: "/", description: "The server that serves this document" }];
}

/**
 * Elysia names an operation after its method and path (`getV1Human-reviews`, `getV1RunsByIdArtifacts*`
 * for a wildcard); client generators turn operationIds into method names, so they become identifiers:
 * `getV1HumanReviews`, `getV1RunsByIdArtifactsByPath`.
 */
export function identifier(operationId: string): string {
  return operationId
    .replace(/[-_.\s]+([A-Za-z0-9])/g, (_, c: string) => c.toUpperCase())
    .replace(/\*/g, "ByPath")
    .replace(/[^A-Za-z0-9]/g, "");
}

/** Builds the document from the app's routes; call once the app has all its routes. */
export function openApiDocument(app: AnyElysia, opts: { publicUrl?: string } = {}) {
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
  for (const ops of Object.values(paths)) {
    for (const op of Object.values(ops)) if (typeof op.operationId === "string") op.operationId = identifier(op.operationId);
  }
  return {
    openapi: "3.1.2",
    info,
    servers: serversFor(opts.publicUrl),
    components: { schemas: components.schemas ?? {}, securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "API key: `Authorization: Bearer <key>`" } } },
    security: [{ bearerAuth: [] }],
    paths,
  };
}
