-- Attribution (SQLite 0202_decision_actor): the id of whoever decided a human-review task.
ALTER TABLE human_review_tasks ADD COLUMN decided_by_id text COLLATE "C";
