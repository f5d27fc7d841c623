import * as v from "valibot";

export const STATUSES = ["WAITING", "IN_PROGRESS", "READY", "COMPLETED"] as const;
export type Status = (typeof STATUSES)[number];
export const WAITING = 0;
export const IN_PROGRESS = 1;
export const READY = 2;
export const COMPLETED = 3;

/** POST /orders body. The price is checked separately (see money.ts) so numbers and strings both work. */
export const CreateOrderBody = v.object({
  description: v.pipe(
    v.string("description must be a string"),
    v.transform((s) => s.trim()),
    v.check((s) => s.length >= 1, "description must not be empty"),
    v.check((s) => [...s].length <= 2000, "description must be at most 2000 characters"),
  ),
  price: v.unknown(),
});

/** A new order as the service takes it: the description trimmed, the price in kopecks. */
export interface NewOrder {
  description: string;
  price: number;
}

/** An order as the API returns it (the original service's field names). */
export interface OrderWire {
  id: number;
  description: string;
  price: number;
  status: Status;
  createdDate: string;
  customerId: number;
  customerName: string;
  performerId: number | null;
  performerName: string | null;
}

/** An order row with its people's names. Money in kopecks, time in epoch ms. */
export interface OrderRow {
  id: number;
  description: string;
  price: number;
  status: number;
  createdAt: number;
  customerId: number;
  customerName: string;
  performerId: number | null;
  performerName: string | null;
}

export const SORT_FIELDS = ["id", "price", "status", "createdDate", "description"] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export interface SortKey {
  field: SortField;
  dir: "asc" | "desc";
}
export interface PageRequest {
  page: number;
  size: number;
  sort: SortKey[];
}
