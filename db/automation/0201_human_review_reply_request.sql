-- The fingerprint of the request an idempotency key first answered (sha256 of action, caller and
-- body): the same key with another request is refused instead of replaying that answer. NULL on
-- replies stored before it (they replay as before).
ALTER TABLE `human_review_replies` ADD `request` text;
