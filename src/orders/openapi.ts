// The OpenAPI 3.1 document served at /openapi/json: written out by hand so it is complete, exact about
// the wire format, and needs nothing at runtime (works offline inside the compiled binary).
const spring = { $ref: "#/components/schemas/Error" };
const json = (schema: object) => ({ "application/json": { schema } });
const err = (description: string) => ({ description, content: json(spring) });
// Any one authenticates: the Authorization header (a token from the password grant, hence `oauth`), or
// RFC 6750's access_token query parameter.
const bearer = [{ bearer: [] }, { oauth: [] }, { accessToken: [] }];
/** No credentials at all (generators then send none). */
const open: never[] = [];
const idParam = { name: "id", in: "path", required: true, schema: { type: "integer" } };
const paging = [
  { name: "page", in: "query", schema: { type: "integer", minimum: 0, default: 0 } },
  { name: "size", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
  {
    name: "sort",
    in: "query",
    description: "Repeatable: field or field,asc|desc. Fields: id, price, status (lifecycle order), createdDate, description.",
    schema: { type: "array", items: { type: "string" }, default: ["createdDate,desc"] },
    style: "form",
    explode: true,
  },
];
const listHeaders = {
  "X-Total-Count": { schema: { type: "integer" }, description: "Number of matching orders" },
  Link: { schema: { type: "string" }, description: "RFC 8288 first/prev/next/last" },
};
const orderList = {
  description: "A page of orders (plain array; paging in headers)",
  headers: listHeaders,
  content: json({ type: "array", items: { $ref: "#/components/schemas/Order" } }),
};
const transition = (operationId: string, summary: string, who: string) => ({
  patch: {
    operationId,
    summary,
    description: who,
    security: bearer,
    parameters: [idParam],
    responses: {
      200: { description: "The updated order", content: json({ $ref: "#/components/schemas/Order" }) },
      401: err("No or invalid token"),
      403: err("Not allowed"),
      404: err("Unknown order"),
      409: err("Wrong state or not enough money"),
    },
  },
});

export function openApiDocument() {
  return {
    openapi: "3.1.0",
    info: {
      title: "order-server",
      version: "1.0.0",
      description: "Marketplace API: customers publish orders, performers take and pass them, customers accept and pay.",
      license: { name: "MIT", identifier: "MIT" },
    },
    // Relative: resolved against the address this document was fetched from, so it is right behind any
    // host, port or proxy without configuration.
    servers: [{ url: "/", description: "The server that serves this document" }],
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An access_token from POST /oauth/token" },
        accessToken: { type: "apiKey", in: "query", name: "access_token", description: "RFC 6750 §2.3; the header wins when both are sent" },
        clientBasic: { type: "http", scheme: "basic", description: "The OAuth client (RFC 6749 §2.3.1); or send client_id and client_secret as parameters instead" },
        oauth: { type: "oauth2", flows: { password: { tokenUrl: "/oauth/token", scopes: { read: "read", write: "write" } } } },
      },
      schemas: {
        User: {
          type: "object",
          required: ["id", "username", "userType", "type", "money"],
          properties: {
            id: { type: "integer" },
            username: { type: "string" },
            userType: { enum: ["Customer", "Performer"] },
            type: { enum: ["Customer", "Performer"], description: "Same as userType" },
            money: { type: "number", description: "Rubles, at most two decimals" },
          },
        },
        Order: {
          type: "object",
          required: ["id", "description", "price", "status", "createdDate", "customerId", "customerName", "performerId", "performerName"],
          properties: {
            id: { type: "integer" },
            description: { type: "string" },
            price: { type: "number", description: "Rubles, at most two decimals" },
            status: { enum: ["WAITING", "IN_PROGRESS", "READY", "COMPLETED"] },
            createdDate: { type: "string", description: "UTC, ISO-8601 without offset", examples: ["2026-11-22T09:30:12"] },
            customerId: { type: "integer" },
            customerName: { type: "string" },
            performerId: { type: ["integer", "null"] },
            performerName: { type: ["string", "null"] },
          },
        },
        NewUser: {
          type: "object",
          required: ["username", "password", "userType"],
          properties: {
            username: { type: "string", minLength: 1, maxLength: 64 },
            password: { type: "string", minLength: 4, maxLength: 128 },
            userType: { enum: ["Customer", "Performer"] },
          },
        },
        NewOrder: {
          type: "object",
          required: ["description", "price"],
          properties: {
            description: { type: "string", minLength: 1, maxLength: 2000 },
            price: { type: "number", exclusiveMinimum: 0, maximum: 1_000_000_000, multipleOf: 0.01 },
          },
        },
        Token: {
          type: "object",
          properties: {
            access_token: { type: "string" },
            token_type: { const: "bearer" },
            expires_in: { type: "integer", const: 86400 },
            scope: { const: "read write" },
          },
        },
        OAuthError: { type: "object", properties: { error: { type: "string" }, error_description: { type: "string" } } },
        Error: {
          type: "object",
          properties: {
            timestamp: { type: "string", format: "date-time" },
            status: { type: "integer" },
            error: { type: "string" },
            message: { type: "string" },
            path: { type: "string" },
          },
        },
      },
    },
    paths: {
      "/oauth/token": {
        post: {
          operationId: "createToken",
          summary: "Password grant: get an access token",
          security: [{ clientBasic: [] }, {}],
          description: "Parameters as query string or form body; client credentials as parameters or HTTP Basic.",
          requestBody: {
            content: {
              "application/x-www-form-urlencoded": {
                schema: {
                  type: "object",
                  properties: {
                    grant_type: { const: "password" },
                    username: { type: "string" },
                    password: { type: "string" },
                    client_id: { type: "string" },
                    client_secret: { type: "string" },
                  },
                },
              },
            },
          },
          responses: {
            200: { description: "Token", content: json({ $ref: "#/components/schemas/Token" }) },
            400: { description: "invalid_request, invalid_grant, unsupported_grant_type", content: json({ $ref: "#/components/schemas/OAuthError" }) },
            401: { description: "invalid_client", content: json({ $ref: "#/components/schemas/OAuthError" }) },
            429: { description: "Too many failed logins (Retry-After)", content: json({ $ref: "#/components/schemas/OAuthError" }) },
          },
        },
      },
      "/users": {
        post: {
          operationId: "registerUser",
          summary: "Register",
          security: open,
          requestBody: { required: true, content: json({ $ref: "#/components/schemas/NewUser" }) },
          responses: {
            201: { description: "Created", content: json({ $ref: "#/components/schemas/User" }) },
            400: err("Invalid field"),
            409: err("Username taken"),
          },
        },
      },
      "/authenticated": {
        get: { operationId: "getAuthenticatedUser", summary: "The caller", security: bearer, responses: { 200: { description: "User", content: json({ $ref: "#/components/schemas/User" }) }, 401: err("No or invalid token") } },
      },
      "/orders": {
        get: {
          operationId: "listWaitingOrders",
          summary: "WAITING orders (performers)",
          security: bearer,
          parameters: paging,
          responses: { 200: orderList, 400: err("Bad paging"), 401: err("No or invalid token"), 403: err("Not a performer") },
        },
        post: {
          operationId: "createOrder",
          summary: "Publish an order (customers)",
          security: bearer,
          requestBody: { required: true, content: json({ $ref: "#/components/schemas/NewOrder" }) },
          responses: {
            201: { description: "Created", content: json({ $ref: "#/components/schemas/Order" }) },
            400: err("Invalid field"),
            401: err("No or invalid token"),
            403: err("Not a customer"),
            409: err("Balance cannot cover price + commission"),
          },
        },
      },
      "/orders/{id}": {
        get: {
          operationId: "getOrder",
          summary: "One order",
          security: bearer,
          parameters: [idParam],
          responses: { 200: { description: "Order", content: json({ $ref: "#/components/schemas/Order" }) }, 401: err("No or invalid token"), 403: err("Not yours"), 404: err("Unknown order") },
        },
      },
      "/orders/{id}/take": transition("takeOrder", "Take a WAITING order", "Performers"),
      "/orders/{id}/pass": transition("passOrder", "Pass an IN_PROGRESS order as done", "The order's performer"),
      "/orders/{id}/accept": transition("acceptOrder", "Accept a READY order and pay price + 5 %", "The order's customer"),
      "/users/{id}/orders": {
        get: {
          operationId: "listUserOrders",
          summary: "Your orders: published (customer) or taken (performer)",
          security: bearer,
          parameters: [idParam, ...paging],
          responses: { 200: orderList, 400: err("Bad paging"), 401: err("No or invalid token"), 403: err("Not you") },
        },
      },
      "/health": {
        get: {
          operationId: "getHealth",
          summary: "Liveness",
          security: open,
          responses: {
            200: { description: "ok", content: json({ type: "object", properties: { status: { const: "ok" } } }) },
            503: err("The database is unavailable or busy (Retry-After)"),
          },
        },
      },
    },
  };
}
