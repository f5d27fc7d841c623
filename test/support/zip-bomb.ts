// Hostile ZIPs for tests: a bomb whose entry declares a few bytes and inflates to far more, built
// without ever holding the inflated bytes.
import { constants, deflateRawSync } from "node:zlib";

const u16 = (n: number) => [n & 0xff, (n >>> 8) & 0xff];
const u32 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];

/** A ZIP of one entry whose raw deflate `data` claims `declared` bytes (CRC 0: it is never reached). */
export function zipOf(name: string, data: Uint8Array, declared: number): Uint8Array {
  const n = new TextEncoder().encode(name);
  const local = [...u32(0x04034b50), ...u16(20), ...u16(0), ...u16(8), ...u16(0), ...u16(0), ...u32(0), ...u32(data.length), ...u32(declared), ...u16(n.length), ...u16(0)];
  const central = [
    ...u32(0x02014b50), ...u16(20), ...u16(20), ...u16(0), ...u16(8), ...u16(0), ...u16(0), ...u32(0), ...u32(data.length), ...u32(declared),
    ...u16(n.length), ...u16(0), ...u16(0), ...u16(0), ...u16(0), ...u32(0), ...u32(0),
  ];
  const cdOffset = local.length + n.length + data.length;
  const cdSize = central.length + n.length;
  const end = [...u32(0x06054b50), ...u16(0), ...u16(0), ...u16(1), ...u16(1), ...u32(cdSize), ...u32(cdOffset), ...u16(0)];
  const out = new Uint8Array(cdOffset + cdSize + end.length);
  let at = 0;
  for (const part of [Uint8Array.from(local), n, data, Uint8Array.from(central), n, Uint8Array.from(end)]) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Raw deflate of `mib` MiB of zero bytes (~1 KB per MiB) in milliseconds: one MiB deflated with a full
 * flush (byte-aligned, history reset, so every copy decodes the same), repeated, then an empty final block.
 */
export function deflatedZeros(mib: number): Uint8Array {
  const segment = deflateRawSync(new Uint8Array(1024 * 1024), { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const out = new Uint8Array(segment.length * mib + 2);
  for (let i = 0; i < mib; i++) out.set(segment, i * segment.length);
  out.set([0x03, 0x00], segment.length * mib);
  return out;
}

/** The bomb: ~1 MB on the wire, an entry that declares 10 bytes and inflates to 1 GiB. */
export function zipBomb(name = "examples/bomb/input/big.bin", inflatedMiB = 1024, declared = 10): Uint8Array {
  return zipOf(name, deflatedZeros(inflatedMiB), declared);
}
