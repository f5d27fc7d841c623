-- A tenant's own provider's re-check period (SQLite 0038_tenant_oidc_recheck), milliseconds; null = at sign-in only.
ALTER TABLE tenant_oidc_providers ADD COLUMN recheck_ms integer;
