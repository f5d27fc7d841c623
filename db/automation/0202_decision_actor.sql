-- Attribution (issue 37): who decided a human-review task. `decided_by` keeps the string the wire
-- shape carries (a person's e-mail, a key's name); `decided_by_id` the id behind it (usr_… or the key's),
-- so the task can name the actor as {type, id, name}. Rows decided before stay with a null id.
ALTER TABLE `human_review_tasks` ADD `decided_by_id` text;
