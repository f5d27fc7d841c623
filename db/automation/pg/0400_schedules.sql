-- Cron ticks decided (SQLite 0400_schedules): claimed by the run they started, in the transaction that
-- inserts the run, or recorded as skipped. The primary key makes a tick start at most one run.
CREATE TABLE schedule_ticks (
	automation_id text COLLATE "C" NOT NULL REFERENCES automations (id),
	schedule_key text COLLATE "C" NOT NULL,
	scheduled_at timestamptz NOT NULL,
	tenant_id text COLLATE "C" NOT NULL,
	outcome text COLLATE "C" NOT NULL,
	run_id text COLLATE "C",
	decided_at timestamptz NOT NULL,
	PRIMARY KEY (automation_id, schedule_key, scheduled_at)
);
