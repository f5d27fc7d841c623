// Demo data for `--profile demo`: seeded only into an empty database, through the same
// services the API uses, so COMPLETED orders really moved money and the ledger explains every balance.
import type { Clock } from "../../kernel/clock";
import type { AtomicStores, OrderStorage } from "../db/storage";
import { OrderService } from "../orders/service";
import type { Caller, UserType } from "../users/model";
import { STARTING_MONEY, usernameKey } from "../users/service";

export const DEMO_PASSWORD = "pass";
export const DEMO_USERS: { username: string; userType: UserType }[] = [
  { username: "anna", userType: "Customer" },
  { username: "boris", userType: "Customer" },
  { username: "vera", userType: "Customer" },
  { username: "dmitry", userType: "Performer" },
  { username: "elena", userType: "Performer" },
  { username: "fedor", userType: "Performer" },
];

const TASKS = [
  "Fix the garden fence", "Assemble a wardrobe", "Paint the balcony railing", "Replace a kitchen tap",
  "Hang three shelves", "Translate a two-page letter", "Walk the dog for a week", "Repair a bicycle brake",
  "Clean the windows", "Set up a home Wi-Fi router", "Move a sofa to the second floor", "Bake a birthday cake",
  "Mow the lawn", "Tutor maths for two hours", "Fix a squeaky door", "Install a ceiling lamp",
  "Proofread a thesis chapter", "Photograph a product line", "Design a business card", "Tune a piano",
  "Replace a broken tile", "Deliver a parcel across town", "Sew curtains", "Build a birdhouse",
];

/** Orders per final status: 20 WAITING, 10 IN_PROGRESS, 8 READY, 12 COMPLETED. */
const PLAN: [number, "WAITING" | "IN_PROGRESS" | "READY" | "COMPLETED"][] = [
  [20, "WAITING"],
  [10, "IN_PROGRESS"],
  [8, "READY"],
  [12, "COMPLETED"],
];

/**
 * Seeds the demo data if the database has no users. Returns whether it did. All of it is one transaction:
 * a process killed mid-seed leaves an empty database, which the next start seeds again. Instances
 * starting together seed once: the one whose insert of the first demo user succeeds goes on; the others
 * wait on that user's unique key until it commits, then find it taken and return false.
 */
export async function seedDemo(storage: OrderStorage, clock: Clock, cost: { memoryCost: number; timeCost: number }): Promise<boolean> {
  if ((await storage.users.count()) > 0) return false;
  // Hashed before the transaction: it holds the write lock (SQLite) and must not yield to the event loop.
  const hashes = await Promise.all(DEMO_USERS.map(() => Bun.password.hash(DEMO_PASSWORD, { algorithm: "argon2id", ...cost })));
  return storage.atomically((stores) => seedInto(stores, clock, hashes));
}

async function seedInto(storage: AtomicStores, clock: Clock, hashes: string[]): Promise<boolean> {
  // Another instance may have seeded while this one hashed.
  if ((await storage.users.count()) > 0) return false;
  const start = clock.now().getTime() - 14 * 24 * 3600_000;
  let t = start;
  const seedClock: Clock = { now: () => new Date(t) };
  const orders = new OrderService(storage.orders, seedClock);

  const people: Caller[] = [];
  for (const [i, u] of DEMO_USERS.entries()) {
    const user = await storage.users.insert({
      username: u.username,
      key: usernameKey(u.username),
      passwordHash: hashes[i],
      userType: u.userType,
      money: STARTING_MONEY[u.userType],
      at: start,
    });
    // Another instance got the first demo user in first: it seeds, this one does not.
    if (!user) {
      if (i === 0) return false;
      throw new Error(`demo user ${u.username} exists already`);
    }
    people.push(user);
  }
  const customers = people.filter((p) => p.userType === "Customer");
  const performers = people.filter((p) => p.userType === "Performer");
  let n = 0;
  for (const [count, status] of PLAN) {
    for (let i = 0; i < count; i++, n++) {
      t = start + n * 6 * 3600_000 + (n % 7) * 17 * 60_000 + n * 13_000;
      const customer = customers[n % customers.length];
      const performer = performers[(n * 2 + 1) % performers.length];
      // Deterministic prices from 12.00 to ~88.50 rubles (in kopecks), some with kopecks.
      const price = (12 + ((n * 37) % 77)) * 100 + (n % 3 === 0 ? 50 : n % 5 === 0 ? 99 : 0);
      const description = `${TASKS[n % TASKS.length]}${n >= TASKS.length ? ` (#${Math.floor(n / TASKS.length) + 1})` : ""}`;
      const order = await orders.create(customer, { description, price });
      if (status === "WAITING") continue;
      t += 40 * 60_000;
      await orders.take(performer, order.id);
      if (status === "IN_PROGRESS") continue;
      t += 3 * 3600_000;
      await orders.pass(performer, order.id);
      if (status === "READY") continue;
      t += 30 * 60_000;
      await orders.accept(customer, order.id);
    }
  }
  return true;
}
