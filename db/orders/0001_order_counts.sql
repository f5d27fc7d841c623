-- Per-status order totals kept by triggers, so a list's X-Total-Count is one primary-key read.
INSERT INTO `order_counts` (`status`, `n`) VALUES (0, 0), (1, 0), (2, 0), (3, 0);
--> statement-breakpoint
CREATE TRIGGER `orders_count_insert` AFTER INSERT ON `orders` BEGIN
  UPDATE `order_counts` SET `n` = `n` + 1 WHERE `status` = NEW.`status`;
END;
--> statement-breakpoint
CREATE TRIGGER `orders_count_update` AFTER UPDATE OF `status` ON `orders` WHEN OLD.`status` <> NEW.`status` BEGIN
  UPDATE `order_counts` SET `n` = `n` - 1 WHERE `status` = OLD.`status`;
  UPDATE `order_counts` SET `n` = `n` + 1 WHERE `status` = NEW.`status`;
END;
--> statement-breakpoint
CREATE TRIGGER `orders_count_delete` AFTER DELETE ON `orders` BEGIN
  UPDATE `order_counts` SET `n` = `n` - 1 WHERE `status` = OLD.`status`;
END;
