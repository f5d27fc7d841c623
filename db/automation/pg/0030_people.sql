-- People (SQLite 0030_people): users, memberships, sessions, one-time links, sign-in throttles.
CREATE TABLE users (
	id text COLLATE "C" PRIMARY KEY,
	email text COLLATE "C" NOT NULL,
	email_key text COLLATE "C" NOT NULL,
	name text COLLATE "C" NOT NULL,
	status text COLLATE "C" NOT NULL,
	password_hash text COLLATE "C",
	created_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX users_email_key_unique ON users (email_key);
--> statement-breakpoint
CREATE TABLE memberships (
	user_id text COLLATE "C" NOT NULL REFERENCES users (id),
	tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
	role text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (user_id, tenant_id)
);
--> statement-breakpoint
CREATE INDEX memberships_tenant ON memberships (tenant_id);
--> statement-breakpoint
CREATE TABLE sessions (
	id text COLLATE "C" PRIMARY KEY,
	hash text COLLATE "C" NOT NULL,
	user_id text COLLATE "C" NOT NULL REFERENCES users (id),
	tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
	csrf text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL,
	last_seen_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX sessions_hash_unique ON sessions (hash);
--> statement-breakpoint
CREATE INDEX sessions_user ON sessions (user_id);
--> statement-breakpoint
CREATE TABLE invitations (
	id text COLLATE "C" PRIMARY KEY,
	hash text COLLATE "C" NOT NULL,
	kind text COLLATE "C" NOT NULL,
	email text COLLATE "C",
	tenant_id text COLLATE "C" REFERENCES tenants (id),
	role text COLLATE "C",
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL,
	used_at timestamptz
);
--> statement-breakpoint
CREATE UNIQUE INDEX invitations_hash_unique ON invitations (hash);
--> statement-breakpoint
CREATE TABLE sign_in_failures (
	subject text COLLATE "C" PRIMARY KEY,
	failures integer NOT NULL,
	window_start_ms bigint NOT NULL
);
