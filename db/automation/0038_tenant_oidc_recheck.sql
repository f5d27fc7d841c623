-- A tenant's own provider may re-check its sessions' roles with their refresh tokens (issue 43), as
-- --oidc-recheck does for the server's: the period in milliseconds, null = at sign-in only.
ALTER TABLE `tenant_oidc_providers` ADD COLUMN `recheck_ms` integer;
