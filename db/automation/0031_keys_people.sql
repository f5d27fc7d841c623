-- Keys made by people (issue 37): a key belongs to the user who made it (`created_by_user`; a key made
-- with a key belongs to that key's user, and `created_by_key` names the key), and may expire. Keys made
-- on the server's shell have neither. Sessions remember the client that signed in (shown in "my sessions").
ALTER TABLE `api_keys` ADD `created_by_user` text REFERENCES `users` (`id`);
--> statement-breakpoint
ALTER TABLE `api_keys` ADD `created_by_key` text;
--> statement-breakpoint
ALTER TABLE `api_keys` ADD `expires_at` text;
--> statement-breakpoint
CREATE INDEX `api_keys_created_by_user` ON `api_keys` (`created_by_user`);
--> statement-breakpoint
ALTER TABLE `sessions` ADD `user_agent` text;
--> statement-breakpoint
ALTER TABLE `sessions` ADD `address` text;
