// Inbound addresses: `<automation-slug>.<token>@<mail-domain>`. The token (16 Crockford base32
// characters, 80 random bits, minted once per automation) is what routes a message; the slug only
// tells people which automation an address belongs to. Why a token and not `<automation>.<tenant>@`:
// docs/automation/inbound-email.md#addresses.
import { newToken } from "../../kernel/ids";

export const TOKEN_CHARS = 16;
const TOKEN = new RegExp(`^[0-9a-hjkmnp-tv-z]{${TOKEN_CHARS}}$`);
/** Local parts may be 64 characters: the slug is cut to leave room for the dot and the token. */
const SLUG_CHARS = 64 - 1 - TOKEN_CHARS;

export const mintToken = () => newToken(TOKEN_CHARS);

export function formatAddress(slug: string, token: string, mailDomain: string): string {
  return `${slug.slice(0, SLUG_CHARS).replace(/[^a-z0-9_-]/g, "-")}.${token}@${mailDomain}`;
}

/** The token an address routes to; undefined when it is not one of ours (other domain, no token). */
export function tokenOf(address: string, mailDomain: string): string | undefined {
  const a = address.trim().toLowerCase();
  const at = a.lastIndexOf("@");
  if (at <= 0 || a.slice(at + 1) !== mailDomain) return undefined;
  const local = a.slice(0, at);
  const token = local.slice(local.lastIndexOf(".") + 1);
  return TOKEN.test(token) ? token : undefined;
}
