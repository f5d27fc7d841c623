// The package's name and version, embedded at build time (the compiled binary has no package.json).
import pkg from "../../package.json";

export const PACKAGE_NAME: string = pkg.name;
export const VERSION: string = pkg.version;
