-- Single sign-on (SQLite 0033_sso_identities): the user an OpenID Connect identity (issuer, subject) is.
CREATE TABLE sso_identities (
	issuer text COLLATE "C" NOT NULL,
	subject text COLLATE "C" NOT NULL,
	user_id text COLLATE "C" NOT NULL REFERENCES users (id),
	email text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL,
	last_sign_in_at timestamptz NOT NULL,
	PRIMARY KEY (issuer, subject)
);
--> statement-breakpoint
CREATE INDEX sso_identities_user ON sso_identities (user_id);
