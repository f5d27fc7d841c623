// Where a command writes: the real terminal, or a test's buffers.
import type { TuiHost } from "../model/types";

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  runTui?: (host: TuiHost) => Promise<number>;
}
