// API keys made through the API (`/v1/keys`, ours): make one (the secret is in that answer only), list
// the tenant's keys with their last use, revoke one. Needs `keys:write` (`keys:read` to list).
import { enc } from "./files";
import type { Transport } from "./transport";
import type { KeyInfo } from "../tenancy/model";

export type { KeyInfo };

/** A key as made: `key` is the secret, shown this once. */
export interface MadeKey extends KeyInfo {
  key: string;
}

export interface KeyCreate {
  /** 1-100 characters. */
  name: string;
  /** Within the caller's own scopes (`*` only from a holder of `*`). */
  scopes: string[];
  /** An ISO date-time in the future; or `expiresInDays` (1-3650); neither: never expires. */
  expiresAt?: string;
  expiresInDays?: number;
}

export interface KeyPage {
  data: KeyInfo[];
  total: number;
  limit: number;
  offset: number;
}

export class KeysResource {
  constructor(private readonly http: Transport) {}

  /** Makes a key (`POST /v1/keys`); keep `key` from the answer: it is never shown again. */
  create(input: KeyCreate): Promise<MadeKey> {
    return this.http.json({ method: "POST", path: "/v1/keys", json: input });
  }

  /** The tenant's keys, newest first, revoked too (never the secrets). */
  list(opts: { limit?: number; offset?: number } = {}): Promise<KeyPage> {
    return this.http.json({ method: "GET", path: "/v1/keys", query: { limit: opts.limit, offset: opts.offset } });
  }

  /** Revokes a key at once; revoking twice answers the same (the first revocation time). */
  revoke(id: string): Promise<KeyInfo> {
    return this.http.json({ method: "DELETE", path: `/v1/keys/${enc(id)}` });
  }
}
