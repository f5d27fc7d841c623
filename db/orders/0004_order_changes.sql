-- The change log the kept list orders catch up from (src/orders/orders/positions.ts): every change to an
-- order's filter or sort columns, before and after, in commit order (SQLite has one writer at a time, so
-- `seq` order is commit order). Written in the changing transaction by triggers, so changes made by any
-- process on this file are logged; the newest 10,000 are kept.
CREATE TABLE `order_changes` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`order_id` integer NOT NULL,
	`old_status` integer,
	`old_customer` integer,
	`old_performer` integer,
	`old_created` integer,
	`old_price` integer,
	`new_status` integer,
	`new_customer` integer,
	`new_performer` integer,
	`new_created` integer,
	`new_price` integer
);
--> statement-breakpoint
CREATE TRIGGER `orders_log_insert` AFTER INSERT ON `orders` BEGIN
  INSERT INTO `order_changes` (`order_id`, `new_status`, `new_customer`, `new_performer`, `new_created`, `new_price`)
  VALUES (NEW.`id`, NEW.`status`, NEW.`customer_id`, NEW.`performer_id`, NEW.`created_at`, NEW.`price`);
END;
--> statement-breakpoint
CREATE TRIGGER `orders_log_update` AFTER UPDATE OF `status`, `customer_id`, `performer_id`, `created_at`, `price` ON `orders` BEGIN
  INSERT INTO `order_changes` (`order_id`, `old_status`, `old_customer`, `old_performer`, `old_created`, `old_price`,
                               `new_status`, `new_customer`, `new_performer`, `new_created`, `new_price`)
  VALUES (NEW.`id`, OLD.`status`, OLD.`customer_id`, OLD.`performer_id`, OLD.`created_at`, OLD.`price`,
          NEW.`status`, NEW.`customer_id`, NEW.`performer_id`, NEW.`created_at`, NEW.`price`);
END;
--> statement-breakpoint
CREATE TRIGGER `orders_log_delete` AFTER DELETE ON `orders` BEGIN
  INSERT INTO `order_changes` (`order_id`, `old_status`, `old_customer`, `old_performer`, `old_created`, `old_price`)
  VALUES (OLD.`id`, OLD.`status`, OLD.`customer_id`, OLD.`performer_id`, OLD.`created_at`, OLD.`price`);
END;
--> statement-breakpoint
CREATE TRIGGER `order_changes_trim` AFTER INSERT ON `order_changes` BEGIN
  DELETE FROM `order_changes` WHERE `seq` <= NEW.`seq` - 10000;
END;
