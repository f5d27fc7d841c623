-- See db/automation/0201_human_review_reply_request.sql.
ALTER TABLE human_review_replies ADD COLUMN request text COLLATE "C";
