-- Trials (SQLite 0161_experiment_trials): how many times an experiment runs each example, and which
-- trial (1-based) a run of such an experiment is. Null on every other run, and on runs of one-trial experiments.
ALTER TABLE experiments ADD COLUMN trials integer NOT NULL DEFAULT 1;
--> statement-breakpoint
ALTER TABLE runs ADD COLUMN trial integer;
