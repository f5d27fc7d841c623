-- Upload sessions whose bytes go straight to S3 (presigned PUT or multipart): where the client stages
-- them, the S3 multipart upload id, and the part size the client was told.
ALTER TABLE `upload_sessions` ADD `staging_key` text;
--> statement-breakpoint
ALTER TABLE `upload_sessions` ADD `multipart_id` text;
--> statement-breakpoint
ALTER TABLE `upload_sessions` ADD `part_size` integer;
