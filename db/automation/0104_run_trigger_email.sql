-- Attribution (issue 37): a run a person starts names them in `trigger.by` as {id: usr_…, name, email};
-- the e-mail is kept beside the id and name the run already had (keys and schedules leave it null).
ALTER TABLE `runs` ADD `triggered_by_email` text;
