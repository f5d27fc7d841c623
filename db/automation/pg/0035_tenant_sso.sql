-- Single sign-on per tenant (SQLite 0035_tenant_sso): SSO as the only way in for the tenant's members.
CREATE TABLE tenant_sso (
	tenant_id text COLLATE "C" PRIMARY KEY REFERENCES tenants (id),
	sso_only boolean NOT NULL DEFAULT false,
	updated_at timestamptz NOT NULL
);
