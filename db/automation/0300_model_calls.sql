-- One row per model call a run made (ai.* steps and anything else calling through the run's model
-- gateway): the run's usage is their sum, the trace lists them, and a resumed run replays a finished
-- call from `response` instead of paying for it again. `request` holds the prompt, shown only with
-- expand=debug. Never an API key.
CREATE TABLE `model_calls` (
	`run_id` text NOT NULL REFERENCES `runs`(`id`) ON DELETE CASCADE,
	`seq` integer NOT NULL,
	`step_path` text,
	`request_hash` text NOT NULL,
	`model` text,
	`provider` text,
	`status` text NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cache_read_tokens` integer DEFAULT 0 NOT NULL,
	`cache_write_tokens` integer DEFAULT 0 NOT NULL,
	`duration_ms` integer DEFAULT 0 NOT NULL,
	`started_at` text NOT NULL,
	`error` text,
	`request` text,
	`response` text,
	PRIMARY KEY (`run_id`, `seq`)
);
CREATE INDEX `model_calls_hash` ON `model_calls` (`run_id`, `request_hash`);
