-- A step's input (issue 40): the values it ran with (its `with:` or control fields after templates),
-- JSON with env-derived values redacted and the size bounded (src/automation/engine/step-input.ts).
-- NULL for steps recorded before this migration, skipped steps and those whose templates failed.
ALTER TABLE `run_steps` ADD `input` text;
