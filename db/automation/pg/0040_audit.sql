-- The audit trail (SQLite 0040_audit): per-tenant hash chains, their heads (appends lock the head row,
-- so instances never fork a chain) and the anchors retention leaves. No secondary index: appends stay
-- cheap; the list's filters scan a tenant's chain by its primary key.
CREATE TABLE audit_entries (
	tenant_key text COLLATE "C" NOT NULL,
	seq bigint NOT NULL,
	id text COLLATE "C" NOT NULL,
	at timestamptz NOT NULL,
	actor_type text COLLATE "C" NOT NULL,
	actor_id text COLLATE "C",
	actor_name text COLLATE "C",
	action text COLLATE "C" NOT NULL,
	resource_type text COLLATE "C",
	resource_id text COLLATE "C",
	request_id text COLLATE "C",
	address text COLLATE "C",
	outcome text COLLATE "C" NOT NULL,
	status integer NOT NULL,
	prev_hash text COLLATE "C" NOT NULL,
	hash text COLLATE "C" NOT NULL,
	PRIMARY KEY (tenant_key, seq)
);
--> statement-breakpoint
CREATE TABLE audit_chains (
	tenant_key text COLLATE "C" PRIMARY KEY,
	seq bigint NOT NULL,
	hash text COLLATE "C" NOT NULL
);
--> statement-breakpoint
CREATE TABLE audit_anchors (
	tenant_key text COLLATE "C" PRIMARY KEY,
	seq bigint NOT NULL,
	hash text COLLATE "C" NOT NULL,
	at timestamptz NOT NULL,
	pruned_at timestamptz NOT NULL
);
