import * as v from "valibot";

const param = (name: string) => v.optional(v.string(`Parameter ${name} must be given once, as text`));

/**
 * The token request after merging query, form body and HTTP Basic credentials. Every field is optional
 * here: which ones are missing decides the RFC 6749 error (invalid_client, invalid_request...).
 */
export const TokenRequest = v.object({
  client_id: param("client_id"),
  client_secret: param("client_secret"),
  grant_type: param("grant_type"),
  username: param("username"),
  password: param("password"),
});
export type TokenRequest = v.InferOutput<typeof TokenRequest>;

export interface TokenResponse {
  access_token: string;
  token_type: "bearer";
  expires_in: number;
  scope: "read write";
}
