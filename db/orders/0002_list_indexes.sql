CREATE INDEX `orders_status_price` ON `orders` (`status`,`price`,`id`);--> statement-breakpoint
CREATE INDEX `orders_status_id` ON `orders` (`status`);