-- Single sign-on, second part (SQLite 0034_sso_sessions): what a session made by SSO keeps of its provider.
CREATE TABLE sso_sessions (
	session_id text COLLATE "C" PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
	provider text COLLATE "C" NOT NULL,
	issuer text COLLATE "C" NOT NULL,
	subject text COLLATE "C" NOT NULL,
	sid text COLLATE "C",
	refresh_token text COLLATE "C",
	id_token text COLLATE "C",
	checked_at timestamptz NOT NULL,
	created_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE INDEX sso_sessions_subject ON sso_sessions (issuer, subject);
--> statement-breakpoint
CREATE INDEX sso_sessions_sid ON sso_sessions (issuer, sid);
