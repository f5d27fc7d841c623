import { expect, test } from "bun:test";
import { sideBySide } from "../../../src/automation/console/web/editor/side-by-side";

test("a changed line faces its replacement; added and removed lines face nothing; numbers follow each side", () => {
  const a = "name: x\nversion: 1.0.0\nsteps:\n  - a\n  - b\n";
  const b = "name: x\nversion: 2.0.0\nsteps:\n  - a\n  - c\n  - d\n";
  const rows = sideBySide(a, b);
  expect(rows.map((r) => [r.kind, r.left?.n ?? null, r.left?.text ?? null, r.right?.n ?? null, r.right?.text ?? null])).toEqual([
    ["same", 1, "name: x", 1, "name: x"],
    ["changed", 2, "version: 1.0.0", 2, "version: 2.0.0"],
    ["same", 3, "steps:", 3, "steps:"],
    ["same", 4, "  - a", 4, "  - a"],
    ["changed", 5, "  - b", 5, "  - c"],
    ["added", null, null, 6, "  - d"],
  ]);
});

test("equal texts are all unchanged rows; a text without a final newline compares equal to one with it", () => {
  expect(sideBySide("a\nb", "a\nb\n").every((r) => r.kind === "same")).toBe(true);
  expect(sideBySide("a\nb\nc\n", "a\nc\n").map((r) => r.kind)).toEqual(["same", "removed", "same"]);
});
