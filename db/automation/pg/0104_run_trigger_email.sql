-- Attribution (SQLite 0104_run_trigger_email): the e-mail of the person who started the run.
ALTER TABLE runs ADD COLUMN triggered_by_email text COLLATE "C";
