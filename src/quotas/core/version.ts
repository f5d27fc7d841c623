// The npm package's name and version. The version is the release's (injected at build time, see
// src/kernel/build-info.ts); src/quotas/manifest.json carries the same number for the package manifest.
import pkg from "../manifest.json";
import { buildVersion } from "../../kernel/build-info";

export const PACKAGE_NAME: string = pkg.name;
export const VERSION: string = buildVersion;
