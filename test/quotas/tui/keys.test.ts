import { describe, expect, test } from "bun:test";
import { decodeKeys } from "../../../src/quotas/tui/keys.ts";

const keys = (s: string) => decodeKeys(s, true).keys;

describe("decodeKeys", () => {
  test("arrows in both cursor modes, paging, home/end, shift-tab", () => {
    expect(keys("\x1b[A\x1b[B\x1b[C\x1b[D")).toEqual(["up", "down", "right", "left"]);
    expect(keys("\x1bOA\x1bOB\x1bOC\x1bOD")).toEqual(["up", "down", "right", "left"]);
    expect(keys("\x1b[5~\x1b[6~")).toEqual(["pgup", "pgdn"]);
    expect(keys("\x1b[H\x1b[F\x1b[1~\x1b[4~")).toEqual(["home", "end", "home", "end"]);
    expect(keys("\x1b[Z")).toEqual(["backtab"]);
  });

  test("Enter (CR or LF), Tab, Ctrl-C, Backspace, a lone Esc", () => {
    expect(keys("\r")).toEqual(["enter"]);
    expect(keys("\n")).toEqual(["enter"]);
    expect(keys("\t")).toEqual(["tab"]);
    expect(keys("\x03")).toEqual(["ctrl-c"]);
    expect(keys("\x7f")).toEqual(["backspace"]);
    expect(keys("\x1b")).toEqual(["esc"]);
    expect(keys("\x1b\x1b")).toEqual(["esc", "esc"]);
  });

  test("letters as typed (hjkl, r, R), several keys in one chunk", () => {
    expect(keys("hjklRq")).toEqual(["h", "j", "k", "l", "R", "q"]);
    expect(keys("j\x1b[Bk")).toEqual(["j", "down", "k"]);
  });

  test("unknown sequences are one unknown key, other control bytes are dropped", () => {
    expect(keys("\x1b[15~j")).toEqual(["unknown", "j"]);
    expect(keys("\x1b[1;5Aq")).toEqual(["unknown", "q"]);
    expect(keys("\x01\x02")).toEqual([]);
  });

  test("a sequence cut at the end of a chunk is kept for the next one", () => {
    expect(decodeKeys("j\x1b")).toEqual({ keys: ["j"], rest: "\x1b" });
    expect(decodeKeys("\x1b" + "[A")).toEqual({ keys: ["up"], rest: "" });
    expect(decodeKeys("\x1b[")).toEqual({ keys: [], rest: "\x1b[" });
    expect(decodeKeys("\x1b[6")).toEqual({ keys: [], rest: "\x1b[6" });
    expect(decodeKeys("\x1b[6" + "~")).toEqual({ keys: ["pgdn"], rest: "" });
    // No more input came: a lone ESC is Esc, a cut sequence is unknown (never "[" and "A" as keys).
    expect(decodeKeys("\x1b", true)).toEqual({ keys: ["esc"], rest: "" });
    expect(decodeKeys("\x1b[", true)).toEqual({ keys: ["unknown"], rest: "" });
  });
});
