import { describe, expect, test } from "bun:test";
import { helpText, parseFlags } from "../../src/kernel/config";
import { UsageError } from "../../src/kernel/errors";

const spec = {
  port: { type: "number", env: "PORT", default: 8080, help: "port" },
  db: { type: "string", env: "DB", help: "database" },
  demo: { type: "boolean", default: false, help: "demo data" },
} as const;

describe("parseFlags", () => {
  test("flag beats env beats file beats default", () => {
    expect(parseFlags(["--port", "1"], spec, { PORT: "2" }, { port: 3 }).values.port).toBe(1);
    expect(parseFlags([], spec, { PORT: "2" }, { port: 3 }).values.port).toBe(2);
    expect(parseFlags([], spec, {}, { port: 3 }).values.port).toBe(3);
    expect(parseFlags([], spec, {}).values.port).toBe(8080);
  });
  test("--x=v, booleans, --no-x and positionals", () => {
    const r = parseFlags(["serve", "--db=a.db", "--demo", "extra"], spec, {});
    expect(r.values.db).toBe("a.db");
    expect(r.values.demo).toBe(true);
    expect(r.positionals).toEqual(["serve", "extra"]);
    expect(parseFlags(["--no-demo"], spec, {}).values.demo).toBe(false);
  });
  test("unknown flags, missing and bad values are usage errors", () => {
    expect(() => parseFlags(["--nope"], spec, {})).toThrow(UsageError);
    expect(() => parseFlags(["--port"], spec, {})).toThrow("--port needs a value");
    expect(() => parseFlags(["--port", "abc"], spec, {})).toThrow("must be a number");
    expect(() => parseFlags([], spec, { PORT: "x" })).toThrow("PORT must be a number");
  });
  test("help lists every flag with env and default", () => {
    const h = helpText("usage: x", spec);
    expect(h).toContain("--port <PORT>");
    expect(h).toContain("env PORT, default 8080");
    expect(h).toContain("--demo");
  });
});
