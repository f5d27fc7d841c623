// The quotas npm package: the compiled executable with its own manifest and docs page, laid out in a
// directory that `npm pack` / `npm publish` take as it is. `bun run build` writes dist/npm/quotas.
// The repository's package.json names the repository and is never published.
import { chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import manifest from "./manifest.json";

const root = join(import.meta.dir, "../..");

/**
 * Writes the package into `outDir` (replaced whole): package.json (the manifest plus `bin` and
 * `files`), README.md (docs/quotas/README.md) and bin/quotas (a copy of `binary`). npm links the
 * command straight to the executable: no node start-up in front of a shell prompt.
 */
export function writeNpmPackage(binary: string, outDir: string): string {
  const tmp = `${outDir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(join(tmp, "bin"), { recursive: true });
  const pkg = { ...manifest, bin: { quotas: "bin/quotas" }, files: ["bin/quotas"], engines: { node: ">=18" } };
  writeFileSync(join(tmp, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  writeFileSync(join(tmp, "README.md"), readFileSync(join(root, "docs/quotas/README.md")));
  copyFileSync(binary, join(tmp, "bin/quotas"));
  chmodSync(join(tmp, "bin/quotas"), 0o755);
  rmSync(outDir, { recursive: true, force: true });
  renameSync(tmp, outDir);
  return outDir;
}

if (import.meta.main) {
  const out = writeNpmPackage(join(root, "dist/quotas"), join(root, "dist/npm/quotas"));
  console.log(`wrote the quotas npm package (${manifest.name}@${manifest.version}) to ${out.slice(root.length + 1)}`);
}
