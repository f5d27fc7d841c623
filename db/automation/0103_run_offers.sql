-- Direct dispatch between processes on one PostgreSQL database (issue 24): an idle worker process offers
-- one of its slots here, and the next run inserted while no run waits in the queue is inserted already
-- claimed by that worker (no claim round trip). SQLite has one process, whose pool takes runs started
-- in it directly; the table exists on both backends so their schemas match, and stays empty here.
CREATE TABLE `run_offers` (
	`worker` text PRIMARY KEY NOT NULL,
	`token` text,
	`lease_ms` integer NOT NULL
);
