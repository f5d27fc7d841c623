-- The automation server on PostgreSQL: the tables of the SQLite migrations 0000-0351 in one step
-- (test/automation/db/pg-schema.test.ts keeps the two in step). Times are timestamptz; 0/1 flags are
-- boolean; JSON the server looks into (metadata, errors, settings) is jsonb, JSON a user gave or a step
-- produced (inputs, outputs, corrections, model requests) is json, which keeps the text as written
-- (key order included) so both backends answer byte-identical bodies. Every text column sorts and
-- compares bytewise (COLLATE "C"), as SQLite does: ids, names and paths come out in the same order on
-- both backends, so pages and cursors are the same.
CREATE TABLE tenants (
	id text COLLATE "C" PRIMARY KEY,
	slug text COLLATE "C" NOT NULL,
	name text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX tenants_slug_unique ON tenants (slug);
--> statement-breakpoint
CREATE TABLE api_keys (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
	name text COLLATE "C",
	hash text COLLATE "C" NOT NULL,
	hint text COLLATE "C" NOT NULL,
	scopes jsonb NOT NULL,
	created_at timestamptz NOT NULL,
	last_used_at timestamptz,
	revoked_at timestamptz
);
--> statement-breakpoint
CREATE UNIQUE INDEX api_keys_hash_unique ON api_keys (hash);
--> statement-breakpoint
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);
--> statement-breakpoint
CREATE TABLE automations (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
	type text COLLATE "C" NOT NULL,
	slug text COLLATE "C" NOT NULL,
	name text COLLATE "C",
	description text COLLATE "C",
	status text COLLATE "C" NOT NULL,
	current_version_id text COLLATE "C",
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX automations_tenant_type_slug ON automations (tenant_id, type, slug);
--> statement-breakpoint
CREATE TABLE automation_versions (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
	automation_id text COLLATE "C" NOT NULL REFERENCES automations (id),
	version text COLLATE "C",
	yaml text COLLATE "C" NOT NULL,
	source_ref text COLLATE "C",
	message text COLLATE "C",
	name text COLLATE "C",
	description text COLLATE "C",
	triggers json NOT NULL,
	input_schema json,
	output_schema json,
	created_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX automation_versions_tag ON automation_versions (automation_id, version) WHERE version IS NOT NULL;
--> statement-breakpoint
CREATE INDEX automation_versions_automation ON automation_versions (automation_id, created_at);
--> statement-breakpoint
CREATE TABLE files (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
	filename text COLLATE "C" NOT NULL,
	content_type text COLLATE "C" NOT NULL,
	size bigint NOT NULL,
	sha256 text COLLATE "C" NOT NULL,
	purpose text COLLATE "C",
	created_at timestamptz NOT NULL,
	expires_at timestamptz
);
--> statement-breakpoint
CREATE INDEX files_tenant ON files (tenant_id, created_at);
--> statement-breakpoint
CREATE INDEX files_sha256 ON files (sha256);
--> statement-breakpoint
CREATE INDEX files_expires ON files (expires_at) WHERE expires_at IS NOT NULL;
--> statement-breakpoint
CREATE TABLE blob_refs (
	sha256 text COLLATE "C" NOT NULL,
	owner text COLLATE "C" NOT NULL,
	tenant_id text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (sha256, owner)
);
--> statement-breakpoint
CREATE INDEX blob_refs_owner ON blob_refs (owner);
--> statement-breakpoint
CREATE TABLE upload_sessions (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
	file_id text COLLATE "C" NOT NULL,
	filename text COLLATE "C" NOT NULL,
	content_type text COLLATE "C" NOT NULL,
	size bigint NOT NULL,
	purpose text COLLATE "C",
	idempotency_key text COLLATE "C",
	status text COLLATE "C" NOT NULL,
	sha256 text COLLATE "C",
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL,
	completed_at timestamptz,
	staging_key text COLLATE "C",
	multipart_id text COLLATE "C",
	part_size bigint
);
--> statement-breakpoint
CREATE UNIQUE INDEX upload_sessions_file_id_unique ON upload_sessions (file_id);
--> statement-breakpoint
CREATE UNIQUE INDEX upload_sessions_idempotency ON upload_sessions (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
--> statement-breakpoint
CREATE INDEX upload_sessions_sha256 ON upload_sessions (sha256) WHERE sha256 IS NOT NULL;
--> statement-breakpoint
-- A run row is also its queue entry: workers claim pending rows (and running rows whose lease lapsed)
-- with one conditional UPDATE … FOR UPDATE SKIP LOCKED on PostgreSQL. JSON columns are json, not jsonb:
-- they come back as the text written, byte for byte as on SQLite.
CREATE TABLE runs (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL,
	type text COLLATE "C" NOT NULL,
	automation_id text COLLATE "C" NOT NULL,
	automation_name text COLLATE "C",
	automation_slug text COLLATE "C",
	version_id text COLLATE "C",
	version_label text COLLATE "C",
	source_ref text COLLATE "C",
	requested_ref text COLLATE "C",
	definition text COLLATE "C" NOT NULL,
	status text COLLATE "C" NOT NULL,
	trigger_type text COLLATE "C",
	triggered_by text COLLATE "C",
	triggered_by_name text COLLATE "C",
	batch_id text COLLATE "C",
	example_id text COLLATE "C",
	experiment_id text COLLATE "C",
	evaluation boolean NOT NULL DEFAULT false,
	input json NOT NULL,
	metadata json,
	overrides json,
	output json,
	error json,
	sample_rank double precision NOT NULL,
	retry_number integer NOT NULL DEFAULT 0,
	previous_run_id text COLLATE "C",
	next_run_id text COLLATE "C",
	parent_run_id text COLLATE "C",
	created_at timestamptz NOT NULL,
	started_at timestamptz,
	completed_at timestamptz,
	cancel_requested_at timestamptz,
	claimed_by text COLLATE "C",
	lease_until bigint,
	attempts integer NOT NULL DEFAULT 0,
	request_id text COLLATE "C"
);
--> statement-breakpoint
CREATE INDEX runs_tenant_created ON runs (tenant_id, created_at, id);
--> statement-breakpoint
-- Nullable sort keys: nulls first ascending (SQLite sorts them as ''), so an index scan either way serves
-- `ORDER BY … ASC NULLS FIRST` and (backwards) `DESC NULLS LAST`.
CREATE INDEX runs_tenant_completed ON runs (tenant_id, completed_at NULLS FIRST, id);
--> statement-breakpoint
CREATE INDEX runs_tenant_started ON runs (tenant_id, started_at NULLS FIRST, id);
--> statement-breakpoint
CREATE INDEX runs_queue ON runs (status, created_at, id);
--> statement-breakpoint
CREATE INDEX runs_tenant_automation ON runs (tenant_id, automation_id);
--> statement-breakpoint
-- The run list's filters (status, trigger, automation, batch) each with its sort, as on SQLite plus
-- what PostgreSQL's planner needs to avoid sorting a tenant's whole history.
CREATE INDEX runs_tenant_status_created ON runs (tenant_id, status, created_at, id);
--> statement-breakpoint
CREATE INDEX runs_tenant_automation_created ON runs (tenant_id, automation_id, created_at, id);
--> statement-breakpoint
CREATE INDEX runs_batch ON runs (batch_id, created_at, id) WHERE batch_id IS NOT NULL;
--> statement-breakpoint
CREATE INDEX runs_parent ON runs (parent_run_id, created_at, id) WHERE parent_run_id IS NOT NULL;
--> statement-breakpoint
CREATE INDEX runs_experiment ON runs (experiment_id, created_at, id);
--> statement-breakpoint
CREATE INDEX runs_example ON runs (example_id);
--> statement-breakpoint
CREATE INDEX runs_experiment_status ON runs (experiment_id, status, created_at, id);
--> statement-breakpoint
CREATE TABLE run_steps (
	run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	path text COLLATE "C" NOT NULL,
	seq bigint NOT NULL,
	name text COLLATE "C" NOT NULL,
	type text COLLATE "C" NOT NULL,
	status text COLLATE "C" NOT NULL,
	output json,
	error json,
	attempt integer NOT NULL,
	started_at timestamptz NOT NULL,
	completed_at timestamptz,
	PRIMARY KEY (run_id, path)
);
--> statement-breakpoint
CREATE TABLE run_events (
	id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	type text COLLATE "C" NOT NULL,
	timestamp timestamptz NOT NULL,
	status text COLLATE "C",
	message text COLLATE "C",
	metadata json
);
--> statement-breakpoint
CREATE INDEX run_events_run ON run_events (run_id, id);
--> statement-breakpoint
CREATE TABLE run_files (
	run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	path text COLLATE "C" NOT NULL,
	role text COLLATE "C" NOT NULL,
	name text COLLATE "C" NOT NULL,
	content_type text COLLATE "C" NOT NULL,
	size bigint NOT NULL,
	sha256 text COLLATE "C" NOT NULL,
	step_name text COLLATE "C",
	file_id text COLLATE "C",
	created_at timestamptz NOT NULL,
	PRIMARY KEY (run_id, path)
);
--> statement-breakpoint
CREATE TABLE dataset_examples (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL,
	automation_id text COLLATE "C" NOT NULL,
	automation_type text COLLATE "C" NOT NULL,
	name text COLLATE "C" NOT NULL,
	input json,
	expected json,
	metadata json,
	annotation text COLLATE "C",
	row_order integer,
	overrides json,
	latest_run_id text COLLATE "C",
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX dataset_examples_name ON dataset_examples (automation_id, name);
--> statement-breakpoint
CREATE INDEX dataset_examples_tenant ON dataset_examples (tenant_id, automation_id, created_at, id);
--> statement-breakpoint
CREATE TABLE example_files (
	example_id text COLLATE "C" NOT NULL REFERENCES dataset_examples (id) ON DELETE CASCADE,
	folder text COLLATE "C" NOT NULL,
	path text COLLATE "C" NOT NULL,
	content_type text COLLATE "C" NOT NULL,
	size bigint NOT NULL,
	sha256 text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (example_id, folder, path)
);
--> statement-breakpoint
CREATE TABLE evaluator_configs (
	automation_id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL,
	yaml text COLLATE "C" NOT NULL,
	updated_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE TABLE experiments (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL,
	automation_id text COLLATE "C" NOT NULL,
	automation_type text COLLATE "C" NOT NULL,
	name text COLLATE "C",
	version text COLLATE "C",
	created_at timestamptz NOT NULL,
	completed_at timestamptz,
	cancelled_at timestamptz,
	run_total integer NOT NULL DEFAULT 0,
	ready_at timestamptz,
	batch_concurrency integer
);
--> statement-breakpoint
CREATE INDEX experiments_automation ON experiments (tenant_id, automation_id, created_at, id);
--> statement-breakpoint
CREATE TABLE run_evaluations (
	run_id text COLLATE "C" PRIMARY KEY,
	experiment_id text COLLATE "C",
	score double precision,
	passed boolean NOT NULL,
	created_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE INDEX run_evaluations_experiment ON run_evaluations (experiment_id);
--> statement-breakpoint
CREATE TABLE eval_results (
	id text COLLATE "C" PRIMARY KEY,
	run_id text COLLATE "C" NOT NULL,
	automation_id text COLLATE "C",
	evaluator_name text COLLATE "C" NOT NULL,
	evaluator_type text COLLATE "C" NOT NULL,
	score double precision,
	passed boolean,
	label text COLLATE "C",
	weight double precision,
	pass_threshold double precision,
	description text COLLATE "C",
	details json,
	error text COLLATE "C",
	created_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE INDEX eval_results_run ON eval_results (run_id, id);
--> statement-breakpoint
CREATE TABLE run_reviews (
	run_id text COLLATE "C" PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	id text COLLATE "C" NOT NULL,
	tenant_id text COLLATE "C" NOT NULL,
	automation_id text COLLATE "C" NOT NULL,
	verdict text COLLATE "C",
	status text COLLATE "C" NOT NULL,
	note text COLLATE "C" NOT NULL DEFAULT '',
	corrected_output json,
	correction_count integer NOT NULL DEFAULT 0,
	reviewed_by text COLLATE "C",
	reviewed_by_email text COLLATE "C",
	reviewed_at timestamptz NOT NULL,
	closed_by text COLLATE "C",
	closed_by_email text COLLATE "C",
	closed_at timestamptz,
	closed_note text COLLATE "C",
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE INDEX run_reviews_tenant_automation ON run_reviews (tenant_id, automation_id);
--> statement-breakpoint
CREATE INDEX run_reviews_tenant_closed ON run_reviews (tenant_id, closed_at);
--> statement-breakpoint
CREATE TABLE run_review_corrections (
	id text COLLATE "C" PRIMARY KEY,
	run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	position integer NOT NULL,
	kind text COLLATE "C" NOT NULL,
	path text COLLATE "C" NOT NULL,
	label text COLLATE "C",
	original_value json,
	corrected_value json,
	note text COLLATE "C" NOT NULL DEFAULT '',
	corrected_artifact_path text COLLATE "C",
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE INDEX run_review_corrections_run ON run_review_corrections (run_id, position);
--> statement-breakpoint
CREATE TABLE run_review_files (
	run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name text COLLATE "C" NOT NULL,
	content_type text COLLATE "C" NOT NULL,
	size bigint NOT NULL,
	sha256 text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (run_id, name)
);
--> statement-breakpoint
CREATE TABLE human_review_tasks (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL,
	run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	step_path text COLLATE "C" NOT NULL,
	automation_id text COLLATE "C" NOT NULL,
	automation_name text COLLATE "C",
	source_label text COLLATE "C" NOT NULL,
	status text COLLATE "C" NOT NULL,
	required_count integer NOT NULL,
	confirmed_count integer NOT NULL DEFAULT 0,
	version integer NOT NULL DEFAULT 1,
	data json NOT NULL,
	files json NOT NULL,
	instructions text COLLATE "C",
	meta json,
	decided_by text COLLATE "C",
	decided_at timestamptz,
	reason text COLLATE "C",
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX human_review_tasks_step ON human_review_tasks (run_id, step_path);
--> statement-breakpoint
CREATE INDEX human_review_tasks_queue ON human_review_tasks (tenant_id, status, created_at, id);
--> statement-breakpoint
CREATE TABLE human_review_decisions (
	id text COLLATE "C" PRIMARY KEY,
	task_id text COLLATE "C" NOT NULL REFERENCES human_review_tasks (id) ON DELETE CASCADE,
	position integer NOT NULL,
	path text COLLATE "C" NOT NULL,
	original_value json,
	current_value json,
	required boolean NOT NULL,
	reason text COLLATE "C",
	confirmed boolean NOT NULL DEFAULT false,
	confirmed_by text COLLATE "C",
	confirmed_at timestamptz,
	version integer NOT NULL DEFAULT 1
);
--> statement-breakpoint
CREATE UNIQUE INDEX human_review_decisions_path ON human_review_decisions (task_id, path);
--> statement-breakpoint
CREATE TABLE human_review_replies (
	task_id text COLLATE "C" NOT NULL REFERENCES human_review_tasks (id) ON DELETE CASCADE,
	idempotency_key text COLLATE "C" NOT NULL,
	status integer NOT NULL,
	body json NOT NULL,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (task_id, idempotency_key)
);
--> statement-breakpoint
-- Whatever ends a run (cancel, a failure, too many restarts) also ends its pending review task, in the
-- same transaction as the status change, as the SQLite trigger of the same name does.
CREATE FUNCTION human_review_tasks_end_with_run() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE human_review_tasks SET status = 'cancelled', version = version + 1,
		updated_at = COALESCE(NEW.completed_at, now())
	WHERE run_id = NEW.id AND status = 'pending';
	RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER human_review_tasks_end_with_run AFTER UPDATE OF status ON runs
FOR EACH ROW
WHEN (NEW.status IN ('completed', 'failed', 'cancelled', 'rejected') AND OLD.status IS DISTINCT FROM NEW.status)
EXECUTE FUNCTION human_review_tasks_end_with_run();
--> statement-breakpoint
CREATE TABLE templates (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
	name text COLLATE "C" NOT NULL,
	description text COLLATE "C",
	current_revision_id text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	deleted_at timestamptz
);
--> statement-breakpoint
CREATE INDEX templates_tenant ON templates (tenant_id, created_at) WHERE deleted_at IS NULL;
--> statement-breakpoint
CREATE TABLE template_revisions (
	id text COLLATE "C" PRIMARY KEY,
	template_id text COLLATE "C" NOT NULL REFERENCES templates (id),
	tenant_id text COLLATE "C" NOT NULL,
	number integer NOT NULL,
	filename text COLLATE "C" NOT NULL,
	format text COLLATE "C" NOT NULL,
	mime_type text COLLATE "C" NOT NULL,
	size bigint NOT NULL,
	sha256 text COLLATE "C" NOT NULL,
	tokens json NOT NULL,
	created_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX template_revisions_number ON template_revisions (template_id, number);
--> statement-breakpoint
CREATE TABLE email_servers (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
	name text COLLATE "C" NOT NULL,
	enabled boolean NOT NULL DEFAULT true,
	transport text COLLATE "C" NOT NULL,
	from_email text COLLATE "C" NOT NULL,
	from_name text COLLATE "C",
	host text COLLATE "C",
	port integer,
	security text COLLATE "C",
	username text COLLATE "C",
	ca_pem text COLLATE "C",
	secret text COLLATE "C",
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	deleted_at timestamptz
);
--> statement-breakpoint
CREATE UNIQUE INDEX email_servers_live_name ON email_servers (tenant_id, name) WHERE deleted_at IS NULL;
--> statement-breakpoint
CREATE INDEX email_servers_tenant ON email_servers (tenant_id, created_at);
--> statement-breakpoint
CREATE TABLE email_deliveries (
	run_id text COLLATE "C" NOT NULL,
	step_path text COLLATE "C" NOT NULL,
	tenant_id text COLLATE "C" NOT NULL,
	server_id text COLLATE "C" NOT NULL,
	state text COLLATE "C" NOT NULL,
	result json,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (run_id, step_path)
);
--> statement-breakpoint
CREATE TABLE model_calls (
	run_id text COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	seq integer NOT NULL,
	step_path text COLLATE "C",
	request_hash text COLLATE "C" NOT NULL,
	model text COLLATE "C",
	provider text COLLATE "C",
	status text COLLATE "C" NOT NULL,
	input_tokens bigint NOT NULL DEFAULT 0,
	output_tokens bigint NOT NULL DEFAULT 0,
	cache_read_tokens bigint NOT NULL DEFAULT 0,
	cache_write_tokens bigint NOT NULL DEFAULT 0,
	duration_ms bigint NOT NULL DEFAULT 0,
	started_at timestamptz NOT NULL,
	error text COLLATE "C",
	request json,
	response json,
	PRIMARY KEY (run_id, seq)
);
--> statement-breakpoint
CREATE INDEX model_calls_hash ON model_calls (run_id, request_hash);
--> statement-breakpoint
CREATE TABLE agent_sources (
	automation_id text COLLATE "C" PRIMARY KEY REFERENCES automations (id),
	tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
	repo text COLLATE "C" NOT NULL,
	mirror text COLLATE "C",
	release_tag text COLLATE "C",
	release_commit text COLLATE "C",
	synced_at timestamptz,
	created_at timestamptz NOT NULL
);
