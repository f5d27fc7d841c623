// Random interleaved marketplace calls for the conservation tests (in-process and across instances):
// creations at random prices (sometimes more than the customer has), takes, passes and accepts mostly by
// the right person (so money moves), sometimes by anyone (so refusals interleave too).

/** Small deterministic PRNG so a failure reproduces. */
export function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Who {
  id: number;
  token: string;
}

/** An HTTP call: `harness().call` or `remote().call`. */
// biome-ignore lint: arbitrary JSON
export type Call = (method: string, path: string, opts: { token?: string; json?: unknown }) => Promise<{ status: number; body: any }>;

/** A load generator over fixed users; `batch(n, via)` sends n calls at once, each through `via()`. */
export function randomLoad(seed: number, customers: Who[], performers: Who[]) {
  const rnd = prng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const orderIds: number[] = [];
  const people = new Map<number, { customer: Who; performer?: Who }>();
  /** Replies per HTTP status. */
  const statuses = new Map<number, number>();
  const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  let ops = 0;

  function one(call: Call): Promise<unknown> {
    const roll = rnd();
    const n = ops++;
    if (roll < 0.3 || orderIds.length === 0) {
      // Prices from 0.01 to ~120 with random kopecks, sometimes more than the customer has.
      const price = Math.round(rnd() * 12_000 + 1) / 100;
      const customer = pick(customers);
      return call("POST", "/orders", { token: customer.token, json: { description: `job ${n}`, price } }).then((r) => {
        if (r.status === 201) {
          orderIds.push(r.body.id);
          people.set(r.body.id, { customer });
        }
        count(r.status);
      });
    }
    const id = pick(orderIds);
    const own = people.get(id)!;
    const [who, action]: [Who, string] =
      roll < 0.5
        ? [pick(performers), "take"]
        : roll < 0.7
          ? [own.performer ?? pick(performers), "pass"]
          : roll < 0.93
            ? [own.customer, "accept"]
            : [pick([...customers, ...performers]), pick(["take", "pass", "accept"])];
    return call("PATCH", `/orders/${id}/${action}`, { token: who.token }).then((r) => {
      if (action === "take" && r.status === 200) own.performer = who;
      count(r.status);
    });
  }

  return {
    statuses,
    ops: () => ops,
    /** Picks one of `choices` at random (the same stream, so a run reproduces). */
    pick,
    batch: (n: number, via: () => Call) => Promise.all(Array.from({ length: n }, () => one(via()))),
  };
}
