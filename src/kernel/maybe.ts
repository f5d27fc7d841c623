// Values that are sometimes promises: SQLite answers synchronously, PostgreSQL with a promise, and a path
// whose every step is synchronous keeps its answer synchronous (no promise or microtask per request).

/** `then` for a value that may be a promise: `f` runs at once on a plain value, after the promise otherwise. */
export function andThen<T, R>(value: T | Promise<T>, f: (v: T) => R): R | Promise<Awaited<R>> {
  return value instanceof Promise ? (value.then(f) as Promise<Awaited<R>>) : f(value);
}
