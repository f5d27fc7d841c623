-- Single sign-on per tenant (issue 43): an owner may make SSO the only way in for the tenant's members
-- (password sign-in refused; API keys still work). No row means passwords are allowed.
CREATE TABLE `tenant_sso` (
	`tenant_id` text PRIMARY KEY NOT NULL REFERENCES `tenants` (`id`),
	`sso_only` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL
);
