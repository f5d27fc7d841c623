import type { Clock } from "../../kernel/clock";
import { Conflict, Forbidden, NotFound } from "../../kernel/errors";
import { commissionOf, formatRubles, rubles } from "../money";
import type { Caller } from "../users/model";
import {
  IN_PROGRESS,
  type NewOrder,
  type OrderRow,
  type OrderWire,
  type PageRequest,
  READY,
  STATUSES,
  WAITING,
} from "./model";
import type { OrderFilter, OrderStore } from "./store";

const denied = (message: string) => Forbidden(message, { code: "access_denied" });

export function orderWire(o: OrderRow): OrderWire {
  return {
    id: o.id,
    description: o.description,
    price: rubles(o.price),
    status: STATUSES[o.status],
    // UTC without an offset, as the original service wrote it (its client appends "Z").
    createdDate: new Date(o.createdAt).toISOString().slice(0, 19),
    customerId: o.customerId,
    customerName: o.customerName,
    performerId: o.performerId,
    performerName: o.performerName,
  };
}

export interface Page {
  items: OrderWire[];
  total: number;
}

export class OrderService {
  constructor(
    private readonly store: OrderStore,
    private readonly clock: Clock,
  ) {}

  /** The role rule for publishing, on its own so that a performer hears 403 before any body check. */
  checkCanPublish(caller: Caller): void {
    if (caller.userType !== "Customer") throw denied("Only customers can publish orders");
  }

  create(caller: Caller, input: NewOrder): OrderWire {
    this.checkCanPublish(caller);
    const price = input.price;
    return this.store.tx(() => {
      const need = price + commissionOf(price);
      const balance = this.store.balance(caller.id);
      if (need > balance) {
        throw Conflict(
          `Balance ${formatRubles(balance)} is not enough to pay ${formatRubles(need)} (price ${formatRubles(price)} + commission ${formatRubles(need - price)})`,
          { field: "price" },
        );
      }
      const id = this.store.insert({ description: input.description, price, customerId: caller.id, at: this.clock.now().getTime() });
      return orderWire(this.store.find(id)!);
    });
  }

  get(caller: Caller, id: number): OrderWire {
    const o = this.mustFind(id);
    const mine = o.customerId === caller.id || o.performerId === caller.id;
    const open = o.status === WAITING && caller.userType === "Performer";
    if (!mine && !open) throw denied(`Order ${id} is not yours`);
    return orderWire(o);
  }

  take(caller: Caller, id: number): OrderWire {
    if (caller.userType !== "Performer") throw denied("Only performers can take orders");
    return this.store.tx(() => {
      const o = this.mustFind(id);
      if (o.status !== WAITING || !this.store.take(id, caller.id)) throw this.wrongState(o, WAITING, "taken");
      return orderWire(this.store.find(id)!);
    });
  }

  pass(caller: Caller, id: number): OrderWire {
    if (caller.userType !== "Performer") throw denied("Only the order's performer can pass it");
    return this.store.tx(() => {
      const o = this.mustFind(id);
      if (o.performerId !== caller.id) throw denied(`Order ${id} is not taken by you`);
      if (o.status !== IN_PROGRESS || !this.store.pass(id, caller.id)) throw this.wrongState(o, IN_PROGRESS, "passed");
      return orderWire(this.store.find(id)!);
    });
  }

  /** READY → COMPLETED and the money moves, all in one transaction or not at all. */
  accept(caller: Caller, id: number): OrderWire {
    if (caller.userType !== "Customer") throw denied("Only the order's customer can accept it");
    return this.store.tx(() => {
      const o = this.mustFind(id);
      if (o.customerId !== caller.id) throw denied(`Order ${id} is not yours`);
      if (o.status !== READY || !this.store.complete(id, caller.id)) throw this.wrongState(o, READY, "accepted");
      const commission = commissionOf(o.price);
      const need = o.price + commission;
      if (!this.store.debit(caller.id, need)) {
        // Throwing rolls back the status change above.
        throw Conflict(
          `Balance ${formatRubles(this.store.balance(caller.id))} is not enough to pay ${formatRubles(need)} (price ${formatRubles(o.price)} + commission ${formatRubles(commission)})`,
        );
      }
      this.store.credit(o.performerId!, o.price);
      const at = this.clock.now().getTime();
      this.store.record([
        { userId: caller.id, orderId: id, amount: -o.price, kind: "payment", at },
        { userId: caller.id, orderId: id, amount: -commission, kind: "commission", at },
        { userId: o.performerId, orderId: id, amount: o.price, kind: "earning", at },
        { userId: null, orderId: id, amount: commission, kind: "commission", at },
      ]);
      return orderWire(this.store.find(id)!);
    });
  }

  /** GET /orders: the WAITING orders, for performers. */
  waitingFilter(caller: Caller): OrderFilter {
    if (caller.userType !== "Performer") throw denied("Only performers can browse open orders");
    return { status: WAITING };
  }

  /** GET /users/{id}/orders: a customer's published orders or a performer's taken ones; only your own. */
  userFilter(caller: Caller, userId: number): OrderFilter {
    if (userId !== caller.id) throw denied("You can only list your own orders");
    return caller.userType === "Customer" ? { customerId: caller.id } : { performerId: caller.id };
  }

  /** Changes whenever any order or balance may have changed; list caches key on it. */
  dataVersion(): number {
    return this.store.dataVersion();
  }

  /** One page of a list, with the total count. */
  page(filter: OrderFilter, p: PageRequest): Page {
    return this.store.snapshot(() => {
      const total = this.store.count(filter);
      const offset = p.page * p.size;
      const items = offset >= total ? [] : this.store.list(filter, p.sort, p.size, offset).map(orderWire);
      return { items, total };
    });
  }

  private mustFind(id: number): OrderRow {
    const o = this.store.find(id);
    if (!o) throw NotFound(`Order ${id} not found`);
    return o;
  }

  private wrongState(o: OrderRow, need: number, verb: string) {
    const now = this.store.find(o.id)?.status ?? o.status;
    return Conflict(`Order ${o.id} is ${STATUSES[now]}; only a${need === IN_PROGRESS ? "n" : ""} ${STATUSES[need]} order can be ${verb}`);
  }
}

