-- Single sign-on providers a tenant's owner adds (issue 43): `id` is the provider's address
-- (/v1/auth/oidc/<id>/…), unique on the server; `client_secret` is sealed under the server's secret key
-- (bound to the id); `role_map` is JSON [{group, role}] into this tenant only, `allowed_domains` JSON.
CREATE TABLE `tenant_oidc_providers` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL REFERENCES `tenants` (`id`),
	`name` text NOT NULL,
	`issuer` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret` text NOT NULL,
	`scopes` text NOT NULL,
	`groups_claim` text NOT NULL,
	`role_map` text NOT NULL,
	`default_role` text,
	`allowed_domains` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `tenant_oidc_providers_tenant` ON `tenant_oidc_providers` (`tenant_id`);
