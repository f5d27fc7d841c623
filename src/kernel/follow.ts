// Following a long job's progress (an experiment, a backtest) as lines: every item already settled,
// then one line per item as it settles, then the final line, after which the follower is done. Lines
// are handled one at a time in the order they came, so the final line waits for the catch-up before
// it, and an item is sent once however it arrives (caught up or live).

/** Where a job's live lines go: the job's id → its followers. The job calls each follower per line. */
export type Followers<L> = Map<string, Set<(line: L) => void>>;

export interface FollowSpec<L> {
  followers: Followers<L>;
  id: string;
  /** An item line's key (sent once); undefined for the final line. */
  keyOf(line: L): string | undefined;
  /** The lines of the items settled so far, skipping keys already `sent` (a catch-up may be costly per item). */
  settled(sent: ReadonlySet<string>): Promise<L[]>;
  /** The final line when the job is complete already (a follower that came late), else undefined. */
  final(): Promise<L | undefined>;
  onError(err: unknown): void;
}

/** Subscribes `emit` to the job's lines until its final line (then `done`); the returned function unsubscribes. */
export function follow<L>(spec: FollowSpec<L>, emit: (line: L) => void, done: () => void): () => void {
  const sent = new Set<string>();
  let closed = false;
  let chain = Promise.resolve();
  const queue = (job: () => Promise<void>) => {
    chain = chain.then(job).catch(spec.onError);
  };
  const sendItem = (line: L, key: string) => {
    if (closed || sent.has(key)) return;
    sent.add(key);
    emit(line);
  };
  const catchUp = async () => {
    for (const line of await spec.settled(sent)) sendItem(line, spec.keyOf(line)!);
  };
  const send = async (line: L) => {
    if (closed) return;
    const key = spec.keyOf(line);
    if (key !== undefined) return sendItem(line, key);
    // Items settled concurrently may report after the one that completed the job: send them first.
    await catchUp();
    if (closed) return;
    emit(line);
    stop();
    done();
  };
  const set = spec.followers.get(spec.id) ?? new Set();
  spec.followers.set(spec.id, set);
  const listener = (line: L) => queue(() => send(line));
  set.add(listener);
  const stop = () => {
    closed = true;
    set.delete(listener);
    if (set.size === 0 && spec.followers.get(spec.id) === set) spec.followers.delete(spec.id);
  };
  queue(async () => {
    await catchUp();
    const last = await spec.final();
    if (last !== undefined) await send(last);
  });
  return stop;
}
