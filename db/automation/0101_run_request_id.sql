-- The x-request-id of the API request that started a run (child runs inherit their parent's), so the
-- run's worker log lines can be joined with the request's; NULL for runs started otherwise.
ALTER TABLE `runs` ADD `request_id` text;
