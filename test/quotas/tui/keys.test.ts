import { describe, expect, test } from "bun:test";
import { decodeKeys } from "../../../src/quotas/tui/keys.ts";

describe("decodeKeys", () => {
  test("arrows in both cursor modes, paging, home/end, shift-tab", () => {
    expect(decodeKeys("\x1b[A\x1b[B\x1b[C\x1b[D")).toEqual(["up", "down", "right", "left"]);
    expect(decodeKeys("\x1bOA\x1bOB\x1bOC\x1bOD")).toEqual(["up", "down", "right", "left"]);
    expect(decodeKeys("\x1b[5~\x1b[6~")).toEqual(["pgup", "pgdn"]);
    expect(decodeKeys("\x1b[H\x1b[F\x1b[1~\x1b[4~")).toEqual(["home", "end", "home", "end"]);
    expect(decodeKeys("\x1b[Z")).toEqual(["backtab"]);
  });

  test("Enter (CR or LF), Tab, Ctrl-C, Backspace, a lone Esc", () => {
    expect(decodeKeys("\r")).toEqual(["enter"]);
    expect(decodeKeys("\n")).toEqual(["enter"]);
    expect(decodeKeys("\t")).toEqual(["tab"]);
    expect(decodeKeys("\x03")).toEqual(["ctrl-c"]);
    expect(decodeKeys("\x7f")).toEqual(["backspace"]);
    expect(decodeKeys("\x1b")).toEqual(["esc"]);
    expect(decodeKeys("\x1b\x1b")).toEqual(["esc", "esc"]);
  });

  test("letters as typed (hjkl, r, R), several keys in one chunk", () => {
    expect(decodeKeys("hjklRq")).toEqual(["h", "j", "k", "l", "R", "q"]);
    expect(decodeKeys("j\x1b[Bk")).toEqual(["j", "down", "k"]);
  });

  test("unknown sequences are one unknown key, other control bytes are dropped", () => {
    expect(decodeKeys("\x1b[15~j")).toEqual(["unknown", "j"]);
    expect(decodeKeys("\x1b[1;5Aq")).toEqual(["unknown", "q"]);
    expect(decodeKeys("\x01\x02")).toEqual([]);
  });
});
