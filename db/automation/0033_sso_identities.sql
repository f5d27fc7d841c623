-- Single sign-on (issue 43): which user an OpenID Connect identity is. An identity is the pair the
-- provider vouches for, its issuer and the subject (`sub`) it gives the person; the e-mail is what it said
-- at the last sign-in (for people reading the table: the user is found by the pair, never by the e-mail).
CREATE TABLE `sso_identities` (
	`issuer` text NOT NULL,
	`subject` text NOT NULL,
	`user_id` text NOT NULL REFERENCES `users` (`id`),
	`email` text NOT NULL,
	`created_at` text NOT NULL,
	`last_sign_in_at` text NOT NULL,
	PRIMARY KEY (`issuer`, `subject`)
);
--> statement-breakpoint
CREATE INDEX `sso_identities_user` ON `sso_identities` (`user_id`);
