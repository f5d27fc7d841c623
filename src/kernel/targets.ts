// The platforms a release ships: Bun's compile target for each, and the names npm uses for it
// (`os`/`cpu`/`libc` in a package manifest, as `process.platform`/`process.arch` spell them).

export interface Target {
  /** Our name: the archive and npm package suffix, and what `--targets` takes. */
  name: string;
  /** `bun build --compile --target` value. */
  bun: string;
  os: "linux" | "darwin" | "win32";
  cpu: "x64" | "arm64";
  /** Linux only: npm installs the package only on a machine with this C library. */
  libc?: "glibc" | "musl";
  /** Executable suffix. */
  exe: "" | ".exe";
}

export const TARGETS: Target[] = [
  { name: "linux-x64", bun: "bun-linux-x64", os: "linux", cpu: "x64", libc: "glibc", exe: "" },
  { name: "linux-arm64", bun: "bun-linux-arm64", os: "linux", cpu: "arm64", libc: "glibc", exe: "" },
  { name: "linux-x64-musl", bun: "bun-linux-x64-musl", os: "linux", cpu: "x64", libc: "musl", exe: "" },
  { name: "linux-arm64-musl", bun: "bun-linux-arm64-musl", os: "linux", cpu: "arm64", libc: "musl", exe: "" },
  { name: "darwin-x64", bun: "bun-darwin-x64", os: "darwin", cpu: "x64", exe: "" },
  { name: "darwin-arm64", bun: "bun-darwin-arm64", os: "darwin", cpu: "arm64", exe: "" },
  { name: "windows-x64", bun: "bun-windows-x64", os: "win32", cpu: "x64", exe: ".exe" },
];

/** The target of the machine this runs on (glibc assumed on Linux), or undefined. */
export function hostTarget(): Target | undefined {
  const glibc = process.platform !== "linux" || Boolean((process.report?.getReport() as { header?: { glibcVersionRuntime?: string } })?.header?.glibcVersionRuntime);
  return TARGETS.find((t) => t.os === process.platform && t.cpu === process.arch && (t.os !== "linux" || t.libc === (glibc ? "glibc" : "musl")));
}

/** Resolves `--targets a,b`; throws one line naming the unknown ones and the valid names. */
export function parseTargets(list: string): Target[] {
  const names = list.split(",").map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !TARGETS.some((t) => t.name === n));
  if (unknown.length) throw new Error(`unknown target ${unknown.map((n) => `"${n}"`).join(", ")}; valid: ${TARGETS.map((t) => t.name).join(", ")}`);
  if (!names.length) throw new Error(`--targets needs at least one of: ${TARGETS.map((t) => t.name).join(", ")}`);
  return TARGETS.filter((t) => names.includes(t.name));
}
