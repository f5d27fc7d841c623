-- Single sign-on providers a tenant's owner adds (SQLite 0037_tenant_oidc_providers).
CREATE TABLE tenant_oidc_providers (
	id text COLLATE "C" PRIMARY KEY,
	tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
	name text COLLATE "C" NOT NULL,
	issuer text COLLATE "C" NOT NULL,
	client_id text COLLATE "C" NOT NULL,
	client_secret text COLLATE "C" NOT NULL,
	scopes text COLLATE "C" NOT NULL,
	groups_claim text COLLATE "C" NOT NULL,
	role_map text COLLATE "C" NOT NULL,
	default_role text COLLATE "C",
	allowed_domains text COLLATE "C" NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);
--> statement-breakpoint
CREATE INDEX tenant_oidc_providers_tenant ON tenant_oidc_providers (tenant_id);
