// What `--version` prints: the version, commit and build date that `bun run build` / `bun run release`
// inject with `--define` (src/kernel/build.ts). Run from source (`bun bin/x.ts`) there is no build:
// the repository's version, commit "source", no date.
import { version } from "../../package.json";

declare const BUILD_VERSION: string | undefined;
declare const BUILD_COMMIT: string | undefined;
declare const BUILD_DATE: string | undefined;

export const buildVersion: string = typeof BUILD_VERSION === "string" ? BUILD_VERSION : version;
export const buildCommit: string = typeof BUILD_COMMIT === "string" ? BUILD_COMMIT : "source";
export const buildDate: string = typeof BUILD_DATE === "string" ? BUILD_DATE : "unbuilt";

/** `order-server 0.1.0 (commit 12175f7, built 2026-11-27T19:55:07Z)` */
export const versionLine = (name: string): string => `${name} ${buildVersion} (commit ${buildCommit}, built ${buildDate})`;
