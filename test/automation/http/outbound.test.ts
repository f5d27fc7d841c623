// The one classification of outbound targets: which addresses are the server's own network, how the
// operator's --outbound-allow lifts that, and that a name is judged by every address it resolves to.
import { describe, expect, test } from "bun:test";
import { addressRefusal, internalReason, ipBytes, literalRefusal, OutboundRefused, parseOutboundAllow, resolveAllowed } from "../../../src/automation/http/outbound";
import { serveConfig, serveFlags } from "../../../src/automation/config";
import { parseFlags } from "../../../src/kernel/config";

const reason = (ip: string) => internalReason(ipBytes(ip)!);

describe("outbound address classification", () => {
  test("loopback, private, CGNAT, link-local, metadata, unspecified, ULA, multicast and reserved are internal", () => {
    const internal: [string, string][] = [
      ["127.0.0.1", "loopback"], ["127.255.0.9", "loopback"], ["::1", "loopback"],
      ["10.0.0.1", "private"], ["172.16.0.1", "private"], ["172.31.255.255", "private"], ["192.168.1.1", "private"],
      ["100.64.0.1", "shared (CGNAT)"], ["100.127.255.255", "shared (CGNAT)"],
      ["169.254.1.1", "link-local"], ["fe80::1", "link-local"], ["fe80::1%eth0", "link-local"], ["febf::1", "link-local"],
      ["169.254.169.254", "cloud metadata"], ["fd00:ec2::254", "cloud metadata"], ["100.100.100.200", "cloud metadata"],
      ["0.0.0.0", "unspecified"], ["0.1.2.3", "unspecified"], ["::", "unspecified"],
      ["fc00::1", "unique-local"], ["fdff::1", "unique-local"],
      ["224.0.0.1", "multicast"], ["ff02::1", "multicast"], ["255.255.255.255", "reserved"],
    ];
    for (const [ip, why] of internal) expect({ ip, why: reason(ip) }).toEqual({ ip, why });
  });

  test("IPv4 inside IPv6 (mapped, compatible, NAT64, 6to4) is judged by its IPv4 address", () => {
    expect(reason("::ffff:127.0.0.1")).toBe("loopback");
    expect(reason("::ffff:7f00:1")).toBe("loopback");
    expect(reason("::ffff:169.254.169.254")).toBe("cloud metadata");
    expect(reason("::ffff:10.0.0.1")).toBe("private");
    expect(reason("::127.0.0.1")).toBe("loopback");
    expect(reason("64:ff9b::10.0.0.1")).toBe("private");
    expect(reason("2002:a9fe:a9fe::1")).toBe("cloud metadata");
    expect(reason("::ffff:8.8.8.8")).toBeNull();
  });

  test("public addresses are not internal", () => {
    for (const ip of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "169.255.0.1", "2606:4700:4700::1111", "2a00:1450::1"]) expect({ ip, why: reason(ip) }).toEqual({ ip, why: null });
  });

  test("--outbound-allow: addresses and CIDR ranges, IPv4 ranges cover IPv4-mapped IPv6; anything else is refused", () => {
    expect(addressRefusal(ipBytes("127.0.0.1")!, ["127.0.0.0/8"])).toBeNull();
    expect(addressRefusal(ipBytes("::ffff:127.0.0.1")!, ["127.0.0.1"])).toBeNull();
    expect(addressRefusal(ipBytes("127.0.0.2")!, ["127.0.0.1"])).toBe("loopback");
    expect(addressRefusal(ipBytes("10.1.2.3")!, ["10.1.0.0/16"])).toBeNull();
    expect(addressRefusal(ipBytes("10.2.0.1")!, ["10.1.0.0/16"])).toBe("private");
    expect(addressRefusal(ipBytes("fd12::1")!, ["fd00::/8"])).toBeNull();
    expect(addressRefusal(ipBytes("169.254.169.254")!, ["10.0.0.0/8"])).toBe("cloud metadata");
    expect(() => parseOutboundAllow(["localhost"])).toThrow("--outbound-allow takes IP addresses and CIDR ranges");
    expect(() => parseOutboundAllow(["10.0.0.0/33"])).toThrow("10.0.0.0/33");
    expect(literalRefusal("[::1]", [])).toBe("loopback");
    expect(literalRefusal("smtp.example.com", [])).toBeNull();
  });

  test("the flag and its variable reach the config; a bad entry is a usage error", () => {
    expect(serveConfig(parseFlags(["--outbound-allow", "127.0.0.1, 10.0.0.0/8"], serveFlags).values).outboundAllow).toEqual(["127.0.0.1", "10.0.0.0/8"]);
    expect(serveConfig(parseFlags([], serveFlags).values).outboundAllow).toEqual([]);
    expect(() => serveConfig(parseFlags(["--outbound-allow", "intranet"], serveFlags).values)).toThrow("--outbound-allow takes IP addresses");
  });
});

describe("resolveAllowed", () => {
  test("literals are checked without DNS; a name resolving to loopback (localhost) is refused without saying where it points", async () => {
    await expect(resolveAllowed("127.0.0.1", [])).rejects.toBeInstanceOf(OutboundRefused);
    await expect(resolveAllowed("[::1]", [])).rejects.toThrow("::1 is a loopback address");
    const err = await resolveAllowed("localhost", []).catch((e: Error) => e);
    expect(err).toBeInstanceOf(OutboundRefused);
    expect((err as Error).message).toContain("localhost resolves to an address inside this server's network");
    expect((err as Error).message).not.toContain("127.0.0.1");
    // A decimal spelling is resolved by the system resolver, then judged by its address.
    await expect(resolveAllowed("2130706433", [])).rejects.toBeInstanceOf(OutboundRefused);
  });

  test("allowed: the checked address is returned to connect to", async () => {
    expect(await resolveAllowed("127.0.0.1", ["127.0.0.1"])).toBe("127.0.0.1");
    expect(["127.0.0.1", "::1"]).toContain(await resolveAllowed("localhost", ["127.0.0.0/8", "::1"]));
    expect(await resolveAllowed("8.8.8.8", [])).toBe("8.8.8.8");
  });
});
