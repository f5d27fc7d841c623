-- Keys made by people (SQLite 0031_keys_people): the key's maker and expiry; the session's client.
ALTER TABLE api_keys ADD COLUMN created_by_user text COLLATE "C" REFERENCES users (id);
--> statement-breakpoint
ALTER TABLE api_keys ADD COLUMN created_by_key text COLLATE "C";
--> statement-breakpoint
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
--> statement-breakpoint
CREATE INDEX api_keys_created_by_user ON api_keys (created_by_user);
--> statement-breakpoint
ALTER TABLE sessions ADD COLUMN user_agent text COLLATE "C";
--> statement-breakpoint
ALTER TABLE sessions ADD COLUMN address text COLLATE "C";
