// Where a tenant may aim this server's outbound connections (SMTP hosts of e-mail servers, action.http
// URLs): never into the server's own network (loopback, private, link-local, CGNAT, unique-local,
// cloud metadata, multicast, reserved) unless the operator allows those addresses with
// `--outbound-allow`. A host name is resolved here and every address it has is checked; the caller
// then connects to the checked address, so a second DNS answer (rebinding) cannot swap it.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

/** An address range, IPv4 held as IPv4-mapped IPv6 (`::ffff:a.b.c.d`) so one comparison serves both. */
export interface Cidr {
  bytes: Uint8Array;
  bits: number;
}

function v4Bytes(s: string): number[] | null {
  const parts = s.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.map(Number);
}

/** 16 bytes of an IP literal (IPv4 mapped, IPv6 zone dropped), or null when `s` is not one. */
export function ipBytes(s: string): Uint8Array | null {
  const text = s.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const kind = isIP(text);
  if (kind === 4) {
    const v4 = v4Bytes(text);
    return v4 ? Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4]) : null;
  }
  if (kind !== 6) return null;
  const groups = (side: string): number[] | null => {
    if (side === "") return [];
    const out: number[] = [];
    const parts = side.split(":");
    for (const [i, p] of parts.entries()) {
      if (i === parts.length - 1 && p.includes(".")) {
        const v4 = v4Bytes(p);
        if (!v4) return null;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (/^[0-9a-f]{1,4}$/i.test(p)) out.push(parseInt(p, 16));
      else return null;
    }
    return out;
  };
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  if (!h || !t) return null;
  const all = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  if (all.length !== 8) return null;
  return Uint8Array.from(all.flatMap((g) => [g >> 8, g & 0xff]));
}

/** `10.0.0.0/8`, `fd00::/8`, or a single address (a /32 or /128). */
export function parseCidr(entry: string): Cidr | null {
  const [addr, len, extra] = entry.trim().split("/");
  if (extra !== undefined) return null;
  const bytes = ipBytes(addr);
  if (!bytes) return null;
  const v4 = isIP(addr.replace(/^\[|\]$/g, "")) === 4;
  const max = v4 ? 32 : 128;
  if (len !== undefined && !/^\d{1,3}$/.test(len)) return null;
  const bits = len === undefined ? max : Number(len);
  if (bits > max) return null;
  return { bytes, bits: v4 ? bits + 96 : bits };
}

function inside(ip: Uint8Array, c: Cidr): boolean {
  for (let bit = 0; bit < c.bits; bit += 8) {
    const n = Math.min(8, c.bits - bit);
    const mask = (0xff << (8 - n)) & 0xff;
    if ((ip[bit / 8] & mask) !== (c.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

const table = (rows: [string, string][]) => rows.map(([range, reason]) => ({ cidr: parseCidr(range)!, reason }));

// Metadata first: its own name in the message. The rest: the IANA special-purpose registries, what
// is not globally reachable or is the server's own network.
const INTERNAL = table([
  ["169.254.169.254", "cloud metadata"],
  ["fd00:ec2::254", "cloud metadata"],
  ["100.100.100.200", "cloud metadata"],
  ["192.0.0.192", "cloud metadata"],
  ["0.0.0.0/8", "unspecified"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "shared (CGNAT)"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "reserved"],
  ["192.0.2.0/24", "reserved"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "reserved"],
  ["198.51.100.0/24", "reserved"],
  ["203.0.113.0/24", "reserved"],
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/4", "reserved"],
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["64:ff9b:1::/48", "private"],
  ["100::/64", "reserved"],
  ["2001:db8::/32", "reserved"],
  ["fc00::/7", "unique-local"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "site-local"],
  ["ff00::/8", "multicast"],
]);

// Prefixes that carry an IPv4 address in their low bytes: the IPv4 address decides.
const V4_COMPATIBLE = parseCidr("::/96")!;
const NAT64 = parseCidr("64:ff9b::/96")!;
const SIX_TO_FOUR = parseCidr("2002::/16")!;
const mapped = (v4: Uint8Array) => Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4]);

/** Why an address is internal ("loopback", "private", ...), or null for a public one. */
export function internalReason(ip: Uint8Array): string | null {
  for (const r of INTERNAL) if (inside(ip, r.cidr)) return r.reason;
  if (inside(ip, V4_COMPATIBLE) || inside(ip, NAT64)) return internalReason(mapped(ip.slice(12, 16)));
  if (inside(ip, SIX_TO_FOUR)) return internalReason(mapped(ip.slice(2, 6)));
  return null;
}

/** Parses `--outbound-allow`; throws an Error naming the first entry that is not an address or range. */
export function parseOutboundAllow(entries: readonly string[]): Cidr[] {
  return entries.map((e) => {
    const c = parseCidr(e);
    if (!c) throw new Error(`--outbound-allow takes IP addresses and CIDR ranges such as 127.0.0.1 or 10.0.0.0/8 (got "${e}")`);
    return c;
  });
}

const parsed = new WeakMap<readonly string[], Cidr[]>();
function policyOf(allow: readonly string[]): Cidr[] {
  let p = parsed.get(allow);
  if (!p) parsed.set(allow, (p = parseOutboundAllow(allow)));
  return p;
}

/** Why this address may not be reached (null: it may): internal and not in the operator's allow list. */
export function addressRefusal(ip: Uint8Array, allow: readonly string[]): string | null {
  const reason = internalReason(ip);
  if (reason === null || policyOf(allow).some((c) => inside(ip, c))) return null;
  return reason;
}

/** For a host given as an IP literal: why it is refused (null: allowed, or a name checked when connecting). */
export function literalRefusal(host: string, allow: readonly string[]): string | null {
  const ip = ipBytes(host);
  return ip ? addressRefusal(ip, allow) : null;
}

/** A target refused before any connection; for a name, the message does not say what it resolved to. */
export class OutboundRefused extends Error {
  constructor(readonly host: string, readonly reason: string | null) {
    const what = reason ? `is a ${reason} address` : "resolves to an address inside this server's network (loopback, private, link-local or metadata)";
    super(`${host} ${what}: this server does not connect there unless its operator allows it with --outbound-allow`);
    this.name = "OutboundRefused";
  }
}

/** Raised when a name does not resolve: a connect-level failure like any other. */
export class ResolveFailed extends Error {
  constructor(readonly host: string, readonly code: string) {
    super(`${host} did not resolve (${code})`);
    this.name = "ResolveFailed";
  }
}

/**
 * The address to connect to for `host` (a name or an IP literal, IPv6 with or without brackets):
 * every address the name resolves to must be public or allowed, else OutboundRefused, before any
 * connection is attempted. Connect to the address returned, never to the name again.
 */
export async function resolveAllowed(host: string, allow: readonly string[]): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, "");
  const literal = ipBytes(bare);
  if (literal) {
    const reason = addressRefusal(literal, allow);
    if (reason) throw new OutboundRefused(bare, reason);
    return bare.replace(/%.*$/, "");
  }
  let answers: { address: string }[];
  try {
    answers = await lookup(bare, { all: true, verbatim: true });
  } catch (err) {
    throw new ResolveFailed(bare, (err as NodeJS.ErrnoException).code ?? "EDNS");
  }
  if (answers.length === 0) throw new ResolveFailed(bare, "ENOTFOUND");
  for (const a of answers) {
    const ip = ipBytes(a.address);
    // What the resolver says is not named, so a tenant cannot read the inside of the DNS through us.
    if (!ip || addressRefusal(ip, allow)) throw new OutboundRefused(bare, null);
  }
  return answers[0].address;
}

/** `address` ready for a URL's host part (IPv6 in brackets). */
export const urlHost = (address: string) => (address.includes(":") ? `[${address}]` : address);

/**
 * Where a request for `url` goes once its host is checked (resolveAllowed): the URL with the checked
 * address in place of a name, with the Host header and the TLS server name the name gives.
 */
export async function pinTarget(url: URL, allow: readonly string[]): Promise<{ target: URL; host?: string; serverName?: string }> {
  const address = await resolveAllowed(url.hostname, allow);
  if (ipBytes(url.hostname)) return { target: url };
  const target = new URL(url);
  target.hostname = urlHost(address);
  return { target, host: url.host, ...(url.protocol === "https:" ? { serverName: url.hostname } : {}) };
}

/** fetch for addresses a tenant chose: each request's host checked and pinned (pinTarget); redirects not followed. */
export function guardedFetch(allow: readonly string[]): (url: string, init?: RequestInit) => Promise<Response> {
  return async (url, init = {}) => {
    const pinned = await pinTarget(new URL(url), allow);
    const headers = new Headers(init.headers);
    if (pinned.host) headers.set("host", pinned.host);
    return fetch(pinned.target, { ...init, headers, redirect: "manual", ...(pinned.serverName ? { tls: { serverName: pinned.serverName } } : {}) });
  };
}
