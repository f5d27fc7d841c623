// Local calendar days in any IANA time zone, fast: the zone's UTC offset is asked of Intl once per UTC
// day (twice when a DST change falls in it), not once per entry.

export function checkZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const systemZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

export class Zone {
  private fmt: Intl.DateTimeFormat | null;
  private cache = new Map<number, number>();

  constructor(readonly name: string) {
    this.fmt = name === "UTC" || name === "Etc/UTC" ? null : new Intl.DateTimeFormat("en-US", { timeZone: name, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric" });
  }

  private offsetAt(ms: number): number {
    if (!this.fmt) return 0;
    const p: Record<string, number> = {};
    for (const x of this.fmt.formatToParts(ms)) if (x.type !== "literal") p[x.type] = Number(x.value);
    const local = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute);
    return local - Math.floor(ms / 60_000) * 60_000;
  }

  /** Offset (ms) of local time from UTC at `ms`. */
  offset(ms: number): number {
    if (!this.fmt) return 0;
    const hour = Math.floor(ms / 3_600_000);
    let o = this.cache.get(hour);
    if (o !== undefined) return o;
    const day = Math.floor(ms / 86_400_000);
    const a = this.offsetAt(day * 86_400_000);
    const b = this.offsetAt(day * 86_400_000 + 86_399_000);
    if (a === b) {
      for (let h = day * 24; h < day * 24 + 24; h++) this.cache.set(h, a);
      return a;
    }
    o = this.offsetAt(hour * 3_600_000);
    this.cache.set(hour, o);
    return o;
  }

  /** Local day number (days since 1970-01-01 in this zone) of an instant. */
  day(ms: number): number {
    return Math.floor((ms + this.offset(ms)) / 86_400_000);
  }

  /** The instant local midnight of a local day number begins (close enough across DST: ±1 h). */
  dayStart(day: number): number {
    const guess = day * 86_400_000;
    return guess - this.offset(guess);
  }
}

/** `2025-10-12` for a local day number. */
export function isoDay(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** Local day number of `2025-10-12` or `20251012`; NaN when not a date. */
export function parseDay(s: string): number {
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(s);
  if (!m) return Number.NaN;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Number.isNaN(ms) || new Date(ms).getUTCDate() !== Number(m[3]) ? Number.NaN : ms / 86_400_000;
}
