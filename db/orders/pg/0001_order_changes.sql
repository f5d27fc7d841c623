-- The change log the kept list orders catch up from (src/orders/orders/positions.ts): every changed order's
-- filter and sort columns, before and after, stamped with the data version its statement moved to. The
-- version row stays locked until the writing transaction commits, so a later version always commits
-- later: a reader that sees version v sees every change stamped up to v and none after. Versions older
-- than the newest 10,000 are deleted by the writers.
CREATE TABLE order_changes (
	v bigint NOT NULL,
	order_id integer NOT NULL,
	old_status smallint,
	old_customer integer,
	old_performer integer,
	old_created bigint,
	old_price bigint,
	new_status smallint,
	new_customer integer,
	new_performer integer,
	new_created bigint,
	new_price bigint
);
--> statement-breakpoint
CREATE INDEX order_changes_v ON order_changes (v);
--> statement-breakpoint
-- Trims the log after a statement logged changes at the current version.
CREATE FUNCTION trim_order_changes() RETURNS void LANGUAGE sql AS $$
	DELETE FROM order_changes WHERE v <= (SELECT v FROM data_version WHERE id = 1) - 10000;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION orders_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM count_orders((SELECT jsonb_object_agg(status, k) FROM (SELECT status, count(*) AS k FROM new_rows GROUP BY status) AS x));
	INSERT INTO order_changes (v, order_id, new_status, new_customer, new_performer, new_created, new_price)
	SELECT (SELECT v FROM data_version WHERE id = 1), n.id, n.status, n.customer_id, n.performer_id, n.created_at, n.price FROM new_rows n;
	PERFORM trim_order_changes();
	RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION orders_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM count_orders((SELECT jsonb_object_agg(status, k) FROM (
		SELECT status, sum(k) AS k FROM (SELECT status, 1 AS k FROM new_rows UNION ALL SELECT status, -1 FROM old_rows) AS y GROUP BY status
	) AS x));
	INSERT INTO order_changes (v, order_id, old_status, old_customer, old_performer, old_created, old_price,
	                           new_status, new_customer, new_performer, new_created, new_price)
	SELECT (SELECT v FROM data_version WHERE id = 1), n.id, o.status, o.customer_id, o.performer_id, o.created_at, o.price,
	       n.status, n.customer_id, n.performer_id, n.created_at, n.price
	FROM new_rows n JOIN old_rows o ON o.id = n.id;
	PERFORM trim_order_changes();
	RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION orders_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM count_orders((SELECT jsonb_object_agg(status, -k) FROM (SELECT status, count(*) AS k FROM old_rows GROUP BY status) AS x));
	INSERT INTO order_changes (v, order_id, old_status, old_customer, old_performer, old_created, old_price)
	SELECT (SELECT v FROM data_version WHERE id = 1), o.id, o.status, o.customer_id, o.performer_id, o.created_at, o.price FROM old_rows o;
	PERFORM trim_order_changes();
	RETURN NULL;
END $$;
