import * as v from "valibot";

/** The token request after merging query, form body and HTTP Basic credentials. */
export const TokenRequest = v.object({
  client_id: v.optional(v.string()),
  client_secret: v.optional(v.string()),
  grant_type: v.optional(v.string()),
  username: v.optional(v.string()),
  password: v.optional(v.string()),
});
export type TokenRequest = v.InferOutput<typeof TokenRequest>;

export interface TokenResponse {
  access_token: string;
  token_type: "bearer";
  expires_in: number;
  scope: "read write";
}
