// A set of 53-bit hashes in one Float64Array (open addressing, linear probing): four million keys in
// 64 MB with no per-key object, and a table that is written to disk and mapped back as it is.

export class KeySet {
  table: Float64Array;
  size = 0;
  /** a mapped file: copied before the first add */
  private shared = false;

  constructor(capacityOrTable: number | Float64Array = 1 << 16, size?: number) {
    if (typeof capacityOrTable === "number") this.table = new Float64Array(capacityOrTable);
    else {
      this.table = capacityOrTable;
      this.shared = true;
      if (size !== undefined) this.size = size;
      else for (let i = 0; i < capacityOrTable.length; i++) if (capacityOrTable[i] !== 0) this.size++;
    }
  }

  /** Keys are never 0 (0 marks an empty slot): hashes are made odd. */
  has(key: number): boolean {
    const t = this.table;
    const mask = t.length - 1;
    for (let i = key >>> 0 & mask; ; i = (i + 1) & mask) {
      const k = t[i];
      if (k === key) return true;
      if (k === 0) return false;
    }
  }

  add(key: number): void {
    if ((this.size + 1) * 2 > this.table.length) this.grow();
    else if (this.shared) {
      this.table = new Float64Array(this.table);
      this.shared = false;
    }
    const t = this.table;
    const mask = t.length - 1;
    for (let i = key >>> 0 & mask; ; i = (i + 1) & mask) {
      const k = t[i];
      if (k === key) return;
      if (k === 0) {
        t[i] = key;
        this.size++;
        return;
      }
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Float64Array(Math.max(1024, old.length * 2));
    this.shared = false;
    this.size = 0;
    for (let i = 0; i < old.length; i++) if (old[i] !== 0) this.add(old[i]);
  }

  *keys(): Generator<number> {
    for (let i = 0; i < this.table.length; i++) if (this.table[i] !== 0) yield this.table[i];
  }
}

const TWO21 = 2 ** 21;

/** Two 32-bit murmur hashes of `s` folded into one odd 53-bit number. */
export function hash53(s: string, salt = 0): number {
  const a = Bun.hash.murmur32v3(s, 0x9747b28c ^ salt) >>> 0;
  const b = Bun.hash.murmur32v3(s, 0x5bd1e995 ^ salt) >>> 0;
  return a * TWO21 + ((b >>> 11) | 1);
}
