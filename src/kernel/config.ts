import { FatalError, UsageError } from "./errors";

/** One command-line flag: its env fallback, type, default and the line `--help` shows. */
export interface FlagSpec {
  type: "string" | "number" | "boolean";
  env?: string;
  default?: string | number | boolean;
  short?: string;
  help: string;
  /** Shown after the flag in help, e.g. `PORT`. */
  value?: string;
}

type ValueOf<F extends FlagSpec> = F["type"] extends "number"
  ? number
  : F["type"] extends "boolean"
    ? boolean
    : string;

export type FlagValues<S extends Record<string, FlagSpec>> = {
  [K in keyof S]: S[K] extends { default: unknown } ? ValueOf<S[K]> : ValueOf<S[K]> | undefined;
};

/**
 * Parses `--name value`, `--name=value`, `--flag`, `--no-flag` and `-s` against a spec. Precedence:
 * flag > environment variable > `fileValues` (a config file, when the product has one) > default.
 * Unknown flags and bad values throw UsageError (one line, exit 2).
 */
export function parseFlags<S extends Record<string, FlagSpec>>(
  argv: string[],
  spec: S,
  env: Record<string, string | undefined> = process.env,
  fileValues: Partial<Record<keyof S, string | number | boolean>> = {},
): { values: FlagValues<S>; positionals: string[] } {
  const raw: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const byShort = new Map(Object.entries(spec).filter(([, f]) => f.short).map(([k, f]) => [f.short!, k]));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
    } else if (arg.startsWith("-") && arg.length === 2 && arg !== "-") {
      name = byShort.get(arg[1]);
      if (!name) throw new UsageError(`unknown flag ${arg}`);
    } else {
      positionals.push(arg);
      continue;
    }
    let f = spec[name];
    if (!f && name.startsWith("no-") && spec[name.slice(3)]?.type === "boolean" && inline === undefined) {
      raw[name.slice(3)] = false;
      continue;
    }
    if (!f) throw new UsageError(`unknown flag --${name}`);
    if (f.type === "boolean") {
      if (inline === undefined) raw[name] = true;
      else if (/^(true|1|yes)$/i.test(inline)) raw[name] = true;
      else if (/^(false|0|no)$/i.test(inline)) raw[name] = false;
      else throw new UsageError(`--${name} takes no value (got "${inline}")`);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    raw[name] = value;
  }

  const values: Record<string, string | number | boolean | undefined> = {};
  for (const [key, f] of Object.entries(spec)) {
    let v: string | number | boolean | undefined = raw[key];
    let from = `--${key}`;
    if (v === undefined && f.env && env[f.env] !== undefined && env[f.env] !== "") {
      v = env[f.env];
      from = f.env;
    }
    if (v === undefined) v = fileValues[key as keyof S];
    if (v === undefined) v = f.default;
    values[key] = v === undefined ? undefined : coerce(key, f, v, from);
  }
  return { values: values as FlagValues<S>, positionals };
}

function coerce(key: string, f: FlagSpec, v: string | number | boolean, from: string): string | number | boolean {
  if (f.type === "number") {
    const n = typeof v === "number" ? v : Number(String(v).trim());
    if (!Number.isFinite(n) || String(v).trim() === "") throw new UsageError(`${from} must be a number (got "${v}")`);
    return n;
  }
  if (f.type === "boolean") {
    if (typeof v === "boolean") return v;
    if (/^(true|1|yes|on)$/i.test(String(v))) return true;
    if (/^(false|0|no|off|)$/i.test(String(v))) return false;
    throw new UsageError(`${from} must be true or false (got "${v}")`);
  }
  return String(v);
}

/** `--help` text: usage line(s), then every flag with its env variable and default. */
export function helpText(usage: string, spec: Record<string, FlagSpec>, extra = ""): string {
  const rows = Object.entries(spec).map(([name, f]) => {
    const left = `${f.short ? `-${f.short}, ` : "    "}--${name}${f.type === "boolean" ? "" : ` <${f.value ?? name.toUpperCase()}>`}`;
    const notes = [f.env ? `env ${f.env}` : "", f.default !== undefined && f.default !== false ? `default ${f.default}` : ""]
      .filter(Boolean)
      .join(", ");
    return [left, f.help + (notes ? ` (${notes})` : "")] as const;
  });
  const width = Math.max(...rows.map(([l]) => l.length)) + 2;
  return `${usage.trimEnd()}\n\nOptions:\n${rows.map(([l, r]) => `  ${l.padEnd(width)}${r}`).join("\n")}\n${extra ? `\n${extra.trimEnd()}\n` : ""}`;
}

/**
 * Runs a command's main function: expected failures print one line and exit non-zero (2 for usage,
 * 1 otherwise); anything else is a bug and keeps its stack.
 */
export async function runMain(name: string, main: () => Promise<unknown> | unknown): Promise<void> {
  try {
    await main();
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${name}: ${err.message}\nRun '${name} --help' for usage.\n`);
      process.exit(2);
    }
    if (err instanceof FatalError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
