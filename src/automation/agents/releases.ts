// Reads an agent repository's releases: the tags that are semver (`v1.2.0` or `1.2.0`), each with its
// `agent.yaml` validated. The latest release decides the agent's metadata; older tags with a missing
// or invalid manifest are left out of the version list with a warning.
import { Invalid, NotFound } from "../../kernel/errors";
import { SEMVER } from "../automations/model";
import { listTags, readAt } from "./git";
import { MANIFEST_FILE, parseManifest, type Manifest, type ManifestIssue } from "./manifest";

export interface Release {
  tag: string;
  /** Bare semver: the version label runs pick (`version=1.2.0` or `v1.2.0`). */
  version: string;
  commit: string;
}

export interface ReadRelease extends Release {
  /** Undefined when the release is already recorded at this commit (its manifest was valid then). */
  manifest?: Manifest;
}

export interface ReleaseSet {
  /** Valid releases, oldest version first. */
  valid: ReadRelease[];
  latest: ReadRelease;
  warnings: string[];
}

/** A release version row's `sourceRef`: `v1.2.0@<commit>`, the Git provenance runs report. */
export const releaseRef = (r: Pick<Release, "tag" | "commit">) => `${r.tag}@${r.commit}`;

export function parseReleaseRef(ref: string | null): { tag: string | null; commit: string | null } {
  if (!ref) return { tag: null, commit: null };
  const at = ref.lastIndexOf("@");
  return at < 0 ? { tag: null, commit: ref } : { tag: ref.slice(0, at), commit: ref.slice(at + 1) };
}

type Parts = { nums: number[]; pre: string[] };
const parts = (v: string): Parts => {
  const [core, pre] = v.split("+")[0].split(/-(.*)/s);
  return { nums: core.split(".").map(Number), pre: pre ? pre.split(".") : [] };
};

/** semver precedence (build metadata ignored). */
export function compareVersions(a: string, b: string): number {
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < 3; i++) if (x.nums[i] !== y.nums[i]) return x.nums[i] - y.nums[i];
  if (!x.pre.length || !y.pre.length) return y.pre.length - x.pre.length;
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const [p, q] = [x.pre[i], y.pre[i]];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    const [np, nq] = [/^\d+$/.test(p), /^\d+$/.test(q)];
    if (np && nq && Number(p) !== Number(q)) return Number(p) - Number(q);
    if (np !== nq) return np ? -1 : 1;
    if (p !== q) return p < q ? -1 : 1;
  }
  return 0;
}

/** Release tags of the repository at `dir`, highest version last; duplicates (`v1.0.0` and `1.0.0`) keep the v-form. */
export async function releaseTags(dir: string): Promise<Release[]> {
  const byVersion = new Map<string, Release>();
  for (const t of await listTags(dir)) {
    const version = t.name.replace(/^v/, "");
    if (!SEMVER.test(version)) continue;
    const seen = byVersion.get(version);
    if (!seen || t.name.startsWith("v")) byVersion.set(version, { tag: t.name, version, commit: t.commit });
  }
  return [...byVersion.values()].sort((a, b) => compareVersions(a.version, b.version));
}

/** The latest release: the highest stable version, or the highest pre-release when there is no stable one. */
function latestOf<T extends Release>(list: T[]): T | undefined {
  const stable = list.filter((r) => !r.version.includes("-"));
  return (stable.length ? stable : list).at(-1);
}

const issueText = (issues: ManifestIssue[]) => issues.map((i) => `${i.field}: ${i.message}`).join("; ");

/**
 * Every release with its manifest read and validated; `known` maps tags already recorded to their
 * commit, whose manifests need no second read. The latest release must have a valid manifest:
 * missing → 404, invalid → 400 naming the fields and lines.
 */
export async function readReleases(dir: string, known: Map<string, string>): Promise<ReleaseSet> {
  const tags = await releaseTags(dir);
  const latestTag = latestOf(tags);
  if (!latestTag) throw NotFound(`the repository has no release tag (a semver tag such as v1.0.0)`, { code: "no_release" });
  const valid: ReadRelease[] = [];
  const warnings: string[] = [];
  for (const r of tags) {
    // The latest is always read: its tools are checked at every sync (warnings repeat, as documented).
    if (known.get(r.version) === r.commit && r !== latestTag) {
      valid.push(r);
      continue;
    }
    const text = await readAt(dir, r.commit, MANIFEST_FILE);
    const parsed = text === null ? undefined : parseManifest(text);
    if (r === latestTag) {
      if (!parsed) throw NotFound(`release ${r.tag} has no ${MANIFEST_FILE}`, { code: "no_manifest" });
      if (!parsed.ok) {
        throw Invalid(`release ${r.tag}: invalid ${MANIFEST_FILE}: ${parsed.issues[0].message}`, { code: "invalid_manifest", issues: parsed.issues });
      }
    }
    if (!parsed) warnings.push(`tag ${r.tag} has no ${MANIFEST_FILE}; it is not offered as a version`);
    else if (!parsed.ok) warnings.push(`tag ${r.tag} has an invalid ${MANIFEST_FILE} (${issueText(parsed.issues)}); it is not offered as a version`);
    else valid.push({ ...r, manifest: parsed.manifest });
  }
  return { valid, latest: valid.find((r) => r.version === latestTag.version)!, warnings };
}
