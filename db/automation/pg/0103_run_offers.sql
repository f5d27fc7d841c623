-- Direct dispatch (SQLite 0103_run_offers): one row per worker process that has offered an idle slot.
-- `token` is the standing offer (NULL once a run took it or the worker withdrew it); the run insert that
-- takes it claims the run for `worker` with a lease of `lease_ms`, in the same statement.
-- UNLOGGED: an offer is worth nothing after a crash of the database server (workers offer again).
CREATE UNLOGGED TABLE run_offers (
	worker text COLLATE "C" PRIMARY KEY,
	token text COLLATE "C",
	lease_ms integer NOT NULL
);
