-- The run list sorted by start time (`sort=startedAt`) walks this index instead of sorting the tenant's runs.
CREATE INDEX `runs_tenant_started` ON `runs` (`tenant_id`,`started_at`,`id`);
