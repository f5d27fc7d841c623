CREATE TABLE `ledger` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer,
	`order_id` integer,
	`amount` integer NOT NULL,
	`kind` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`order_id`) REFERENCES `orders`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `ledger_user` ON `ledger` (`user_id`);--> statement-breakpoint
CREATE INDEX `ledger_order` ON `ledger` (`order_id`);--> statement-breakpoint
CREATE TABLE `order_counts` (
	`status` integer PRIMARY KEY NOT NULL,
	`n` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `orders` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`description` text NOT NULL,
	`price` integer NOT NULL,
	`status` integer NOT NULL,
	`created_at` integer NOT NULL,
	`customer_id` integer NOT NULL,
	`performer_id` integer,
	FOREIGN KEY (`customer_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`performer_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "orders_price_positive" CHECK("orders"."price" > 0),
	CONSTRAINT "orders_status_range" CHECK("orders"."status" BETWEEN 0 AND 3)
);
--> statement-breakpoint
CREATE INDEX `orders_status_created` ON `orders` (`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `orders_customer_created` ON `orders` (`customer_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `orders_performer_created` ON `orders` (`performer_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `tokens` (
	`hash` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `tokens_user` ON `tokens` (`user_id`);--> statement-breakpoint
CREATE INDEX `tokens_expires` ON `tokens` (`expires_at`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`username_key` text NOT NULL,
	`password_hash` text NOT NULL,
	`user_type` text NOT NULL,
	`money` integer NOT NULL,
	`created_at` integer NOT NULL,
	CONSTRAINT "users_money_not_negative" CHECK("users"."money" >= 0),
	CONSTRAINT "users_type" CHECK("users"."user_type" IN ('Customer', 'Performer'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_key` ON `users` (`username_key`);