import { describe, expect, test } from "bun:test";
import { ENTER, LEAVE, diffFrame, osc52 } from "../../../src/quotas/tui/screen.ts";

describe("diffFrame", () => {
  test("the first frame writes every line at its row", () => {
    const out = diffFrame(null, ["aaa", "bbb"]);
    expect(out).toBe("\x1b[1;1Haaa\x1b[0m\x1b[2;1Hbbb\x1b[0m");
  });

  test("an identical frame writes nothing", () => {
    expect(diffFrame(["a", "b", "c"], ["a", "b", "c"])).toBe("");
  });

  test("only changed lines are written, never a screen clear", () => {
    const out = diffFrame(["a", "b", "c", "d"], ["a", "B", "c", "D"]);
    expect(out).toBe("\x1b[2;1HB\x1b[0m\x1b[4;1HD\x1b[0m");
    expect(out).not.toContain("\x1b[2J");
    expect(out).not.toContain("a");
  });
});

describe("escape sequences", () => {
  test("OSC 52 carries the text base64-encoded, terminated by BEL", () => {
    const text = '{"provider":"claude","name":"Cläude"}';
    const seq = osc52(text);
    expect(seq.startsWith("\x1b]52;c;")).toBe(true);
    expect(seq.endsWith("\x07")).toBe(true);
    expect(Buffer.from(seq.slice(7, -1), "base64").toString("utf8")).toBe(text);
  });

  test("entering uses the alternate screen and hides the cursor; leaving undoes both", () => {
    expect(ENTER).toContain("\x1b[?1049h");
    expect(ENTER).toContain("\x1b[?25l");
    expect(LEAVE).toContain("\x1b[?1049l");
    expect(LEAVE).toContain("\x1b[?25h");
    expect(LEAVE).toContain("\x1b[?7h");
  });
});
