-- Single sign-on, second part (issue 43): what a session made by SSO keeps of its provider. `sid` is the
-- provider's session (back-channel logout names it), `refresh_token` (sealed under the server's secret
-- key, bound to the session) lets the role be checked again within the session's life (--oidc-recheck),
-- `id_token` (sealed) is the hint RP-initiated logout sends back. A row goes with its session.
CREATE TABLE `sso_sessions` (
	`session_id` text PRIMARY KEY NOT NULL REFERENCES `sessions` (`id`) ON DELETE CASCADE,
	`provider` text NOT NULL,
	`issuer` text NOT NULL,
	`subject` text NOT NULL,
	`sid` text,
	`refresh_token` text,
	`id_token` text,
	`checked_at` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sso_sessions_subject` ON `sso_sessions` (`issuer`, `subject`);
--> statement-breakpoint
CREATE INDEX `sso_sessions_sid` ON `sso_sessions` (`issuer`, `sid`);
