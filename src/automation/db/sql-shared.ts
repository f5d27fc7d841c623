// What the SQLite and PostgreSQL stores share that is not SQL of one dialect.

/** A `LIKE … ESCAPE '\'` pattern matching `s` anywhere, its own `%`, `_` and `\` taken literally. */
export const likeEscape = (s: string) => `%${s.replace(/[%_\\]/g, (c) => `\\${c}`)}%`;

/** z for a two-sided 95 % interval (review health's Wilson interval, on both backends). */
export const Z95 = 1.959963984540054;
