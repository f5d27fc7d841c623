// The npm package's name and version (its own manifest, not the repository's package.json), embedded
// at build time: the compiled binary has no package.json.
import pkg from "../manifest.json";

export const PACKAGE_NAME: string = pkg.name;
export const VERSION: string = pkg.version;
