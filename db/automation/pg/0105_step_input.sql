-- A step's input (SQLite 0105_step_input): the values it ran with, secrets redacted, size bounded.
ALTER TABLE run_steps ADD COLUMN input json;
