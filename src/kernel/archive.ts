// Release archives: .tar.gz (a plain ustar writer: a few files, no links) and .zip (fflate), with
// fixed owner and time so the same inputs give the same bytes; and the SHA256SUMS line format.
import { zipSync } from "fflate";

export interface Entry {
  /** Path inside the archive, `/`-separated. */
  path: string;
  data: Uint8Array;
  mode: number;
}

function header(path: string, size: number, mode: number, mtime: number): Uint8Array {
  if (Buffer.byteLength(path) > 100) throw new Error(`archive path too long: ${path}`);
  const h = new Uint8Array(512);
  const put = (text: string, at: number) => h.set(Buffer.from(text), at);
  const octal = (n: number, width: number) => n.toString(8).padStart(width - 1, "0") + "\0";
  put(path, 0);
  put(octal(mode, 8), 100);
  put(octal(0, 8), 108); // uid
  put(octal(0, 8), 116); // gid
  put(octal(size, 12), 124);
  put(octal(mtime, 12), 136);
  put("        ", 148); // checksum field counts as spaces while summing
  put("0", 156); // regular file
  put("ustar\0" + "00", 257);
  put("root", 265);
  put("root", 297);
  let sum = 0;
  for (const b of h) sum += b;
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148);
  return h;
}

/** A gzip'd ustar archive of `entries` (owner root, the given mtime in seconds). */
export function tarGz(entries: Entry[], mtime: number): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    parts.push(header(e.path, e.data.length, e.mode, mtime), e.data);
    const pad = (512 - (e.data.length % 512)) % 512;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(1024)); // two zero blocks end the archive
  // level 6: level 9 takes twice as long for 2.5 % less (docs/benchmarks.md)
  return Bun.gzipSync(Buffer.concat(parts), { level: 6 });
}

/** A zip of `entries` (deflate level 6; unix mode bits kept in the external attributes). */
export function zip(entries: Entry[], mtime: number): Uint8Array {
  const files: Record<string, [Uint8Array, { level: 6; mtime: Date; os: number; attrs: number }]> = {};
  for (const e of entries) files[e.path] = [e.data, { level: 6, mtime: new Date(mtime * 1000), os: 3, attrs: (0o100000 | e.mode) << 16 }];
  return zipSync(files);
}

export const sha256 = (data: Uint8Array): string => new Bun.CryptoHasher("sha256").update(data).digest("hex");

/** `sha256sum -c` input: `<hex>  <name>` per line (two spaces: text mode), sorted by name. */
export const sha256sums = (files: { name: string; data: Uint8Array }[]): string =>
  [...files].sort((a, b) => a.name.localeCompare(b.name)).map((f) => `${sha256(f.data)}  ${f.name}\n`).join("");
