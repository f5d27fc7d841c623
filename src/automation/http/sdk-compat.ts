// Responses to the official SDKs that their client code would otherwise refuse. The TypeScript SDK
// (0.11.2) checks every response it does not mark as binary against a wrong-base-URL guard that only
// admits JSON, octet-stream or ZIP, so a PDF artifact (`runs.artifacts.download`) or a CSV export
// (`experiments.export`) failed there although the server answered correctly. The SDKs announce
// themselves with the `X-Eigenpal-Sdk` telemetry header on every request; those requests get such
// bodies as `application/octet-stream` (the SDK then reads them as a Blob or as text, as it asked).
// Every other client keeps the real type.

const ADMITTED = /json|octet-stream|zip|event-stream/;

/** Relabels a successful non-JSON body as octet-stream for a request from an official SDK. */
export function forOfficialSdk(request: Request, response: unknown): void {
  if (!(response instanceof Response) || !response.ok || !request.headers.has("x-eigenpal-sdk")) return;
  const type = response.headers.get("content-type");
  if (type && !ADMITTED.test(type)) response.headers.set("content-type", "application/octet-stream");
}
