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
import { noEvents, type OrderEvents } from "../metrics";

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

/**
 * Each row's wire JSON, made once per row object and kept on it (a symbol key: not a field, never
 * serialized): the store hands out the same object while the row is unchanged (see positions.ts).
 */
const WIRE_JSON = Symbol("wire JSON");

function orderJson(o: OrderRow & { [WIRE_JSON]?: string }): string {
  return (o[WIRE_JSON] ??= JSON.stringify(orderWire(o)));
}

/** A page of a list: its orders as a JSON array, and the list's total. */
export interface Page {
  json: string;
  total: number;
}

export class OrderService {
  constructor(
    private readonly store: OrderStore,
    private readonly clock: Clock,
    private readonly events: OrderEvents = noEvents,
  ) {}

  /** The role rule for publishing, on its own so that a performer hears 403 before any body check. */
  checkCanPublish(caller: Caller): void {
    if (caller.userType !== "Customer") throw denied("Only customers can publish orders");
  }

  async create(caller: Caller, input: NewOrder): Promise<OrderWire> {
    this.checkCanPublish(caller);
    const price = input.price;
    const need = price + commissionOf(price);
    const r = await this.store.create({ description: input.description, price, customerId: caller.id, at: this.clock.now().getTime(), need });
    if ("balance" in r) {
      throw Conflict(
        `Balance ${formatRubles(r.balance)} is not enough to pay ${formatRubles(need)} (price ${formatRubles(price)} + commission ${formatRubles(need - price)})`,
        { field: "price" },
      );
    }
    this.events.transition("published");
    return orderWire((await this.store.find(r.id))!);
  }

  async get(caller: Caller, id: number): Promise<OrderWire> {
    const o = await this.mustFind(id);
    const mine = o.customerId === caller.id || o.performerId === caller.id;
    const open = o.status === WAITING && caller.userType === "Performer";
    if (!mine && !open) throw denied(`Order ${id} is not yours`);
    return orderWire(o);
  }

  async take(caller: Caller, id: number): Promise<OrderWire> {
    if (caller.userType !== "Performer") throw denied("Only performers can take orders");
    const o = await this.mustFind(id);
    // The update is conditional (still WAITING), so of many racing performers, on any instance, one wins.
    if (o.status !== WAITING || !(await this.store.take(id, caller.id))) throw await this.wrongState(o, WAITING, "taken");
    this.events.transition("taken");
    return orderWire((await this.store.find(id))!);
  }

  async pass(caller: Caller, id: number): Promise<OrderWire> {
    if (caller.userType !== "Performer") throw denied("Only the order's performer can pass it");
    const o = await this.mustFind(id);
    if (o.performerId !== caller.id) throw denied(`Order ${id} is not taken by you`);
    if (o.status !== IN_PROGRESS || !(await this.store.pass(id, caller.id))) throw await this.wrongState(o, IN_PROGRESS, "passed");
    this.events.transition("passed");
    return orderWire((await this.store.find(id))!);
  }

  /** READY → COMPLETED and the money moves, all in one transaction or not at all (see OrderStore.settle). */
  async accept(caller: Caller, id: number): Promise<OrderWire> {
    if (caller.userType !== "Customer") throw denied("Only the order's customer can accept it");
    const o = await this.mustFind(id);
    if (o.customerId !== caller.id) throw denied(`Order ${id} is not yours`);
    if (o.status !== READY) throw await this.wrongState(o, READY, "accepted");
    const commission = commissionOf(o.price);
    const r = await this.store.settle({ id, customerId: caller.id, performerId: o.performerId!, price: o.price, commission, at: this.clock.now().getTime() });
    if (!r.ok && r.reason === "state") throw await this.wrongState(o, READY, "accepted");
    if (!r.ok && r.reason === "funds") {
      throw Conflict(
        `Balance ${formatRubles(r.balance)} is not enough to pay ${formatRubles(o.price + commission)} (price ${formatRubles(o.price)} + commission ${formatRubles(commission)})`,
      );
    }
    this.events.transition("completed");
    return orderWire((await this.store.find(id))!);
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

  /** Changes whenever any order may have changed (on any instance); list caches key on it. */
  dataVersion(): number | Promise<number> {
    return this.store.dataVersion();
  }

  /** One page of a list, with the total count. */
  async page(filter: OrderFilter, p: PageRequest): Promise<Page> {
    const { rows, total } = await this.store.page(filter, p.sort, p.size, p.page * p.size);
    return { json: `[${rows.map(orderJson).join(",")}]`, total };
  }

  private async mustFind(id: number): Promise<OrderRow> {
    const o = await this.store.find(id);
    if (!o) throw NotFound(`Order ${id} not found`);
    return o;
  }

  private async wrongState(o: OrderRow, need: number, verb: string) {
    const now = (await this.store.find(o.id))?.status ?? o.status;
    return Conflict(`Order ${o.id} is ${STATUSES[now]}; only a${need === IN_PROGRESS ? "n" : ""} ${STATUSES[need]} order can be ${verb}`);
  }
}
