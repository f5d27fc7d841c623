-- The version a run's caller asked for (`v1.2.0`, `1.2.0`, `latest`, a version id), as given; NULL
-- when none was asked. Agent runs report it as source.git.requestedRef.
ALTER TABLE `runs` ADD `requested_ref` text;
