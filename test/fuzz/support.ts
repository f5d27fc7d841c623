// Hostile ZIPs and the fixture helpers the fuzz suites share.
import { zipSync } from "fflate";
import { zipBomb } from "../support/zip-bomb";

/** Dataset archives an attacker would send: zip-slip names, absolute paths, a lying bomb, not a zip. */
export function hostileZips(): Uint8Array[] {
  const enc = new TextEncoder();
  return [
    zipSync({ "examples/../../../etc/evil/input.json": enc.encode("{}") }),
    zipSync({ "/abs/input.json": enc.encode("{}"), "examples/ok/input.json": enc.encode("{}") }),
    zipSync({ "examples/a/input.json": enc.encode("{not json") }),
    zipSync({ "examples/a/input/..\\..\\x": enc.encode("x") }),
    // 32 MiB of zeros declared as 10 bytes: small enough for many cases, refused all the same.
    zipBomb("examples/bomb/input/big.bin", 32, 10),
    enc.encode("PK\u0003\u0004 truncated"),
  ];
}

/** True when `text` is the automation server's error envelope. */
export function isIssuesEnvelope(text: string): boolean {
  try {
    const b = JSON.parse(text) as { issues?: { message?: unknown }[]; requestId?: unknown };
    return Array.isArray(b.issues) && b.issues.length > 0 && b.issues.every((i) => typeof i.message === "string") && typeof b.requestId === "string";
  } catch {
    return false;
  }
}

/** True when `text` is one of the order server's envelopes: Spring-style, or OAuth's on /oauth/token. */
export function isOrdersEnvelope(text: string): boolean {
  try {
    const b = JSON.parse(text) as Record<string, unknown>;
    const spring = typeof b.status === "number" && typeof b.message === "string" && typeof b.error === "string" && typeof b.path === "string";
    const oauth = typeof b.error === "string" && typeof b.error_description === "string";
    return spring || oauth;
  } catch {
    return false;
  }
}
