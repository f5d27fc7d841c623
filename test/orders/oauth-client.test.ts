// A standard OAuth 2.0 client library (oauth4webapi, not our code) gets a token from a real server on
// loopback, with both client authentication methods, and reads RFC 6749 errors.
import { afterAll, describe, expect, test } from "bun:test";
import * as oauth from "oauth4webapi";
import { CLIENT, harness } from "./harness";

const h = await harness({}, "sqlite");
h.app.listen({ port: 0, hostname: "127.0.0.1" });
const base = `http://127.0.0.1:${h.app.server!.port}`;
afterAll(() => h.app.stop(true));

const as: oauth.AuthorizationServer = { issuer: base, token_endpoint: `${base}/oauth/token` };
const client: oauth.Client = { client_id: CLIENT.id };
const insecure = { [oauth.allowInsecureRequests]: true };

describe("a standard OAuth2 client library", () => {
  test("obtains a token with the password grant (client_secret_basic and client_secret_post)", async () => {
    await h.register("libuser", "Performer", "s3cret");
    for (const auth of [oauth.ClientSecretBasic(CLIENT.secret), oauth.ClientSecretPost(CLIENT.secret)]) {
      const res = await oauth.genericTokenEndpointRequest(as, client, auth, "password", { username: "libuser", password: "s3cret" }, insecure);
      const tokens = await oauth.processGenericTokenEndpointResponse(as, client, res);
      expect(tokens.token_type).toBe("bearer");
      expect(tokens.expires_in).toBe(86400);
      expect(tokens.scope).toBe("read write");
      const me = await fetch(`${base}/authenticated`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(((await me.json()) as { username: string }).username).toBe("libuser");
    }
  }, 30_000);

  test("sees invalid_grant as an RFC 6749 error response", async () => {
    const res = await oauth.genericTokenEndpointRequest(as, client, oauth.ClientSecretBasic(CLIENT.secret), "password", { username: "libuser", password: "wrong" }, insecure);
    const err = await oauth.processGenericTokenEndpointResponse(as, client, res).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(oauth.ResponseBodyError);
    expect((err as oauth.ResponseBodyError).error).toBe("invalid_grant");
    expect((err as oauth.ResponseBodyError).error_description).toBe("Bad credentials");
  }, 30_000);
});
