// How far a batch of runs (an experiment, a backtest) has come: a bar and "done/total".
export function Progress({ done, total, what }: { done: number; total: number; what: string }) {
  return (
    <>
      <progress class="progress" max={total || 1} value={done} aria-label={`${done} of ${total} runs ${what}`} /> {done}/{total}
    </>
  );
}
