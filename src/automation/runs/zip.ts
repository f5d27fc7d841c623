// Streams a ZIP of a run's files with fflate's streaming Zip: entries are fed chunk by chunk from the
// blob store and the archive leaves as it is produced (callers cap the total at 32 MiB uncompressed).
import { Zip, ZipDeflate, ZipPassThrough } from "fflate";

export interface ZipEntry {
  name: string;
  open(): Promise<Blob | null>;
}

const compressible = (name: string) => /\.(json|txt|csv|xml|html?|md|ya?ml|log|svg)$/i.test(name);

export function zipStream(entries: ZipEntry[]): ReadableStream<Uint8Array> {
  let zip: Zip;
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      zip = new Zip((err, chunk, final) => {
        if (err) return controller.error(err);
        controller.enqueue(chunk);
        if (final) controller.close();
      });
      try {
        for (const e of entries) {
          const file = compressible(e.name) ? new ZipDeflate(e.name, { level: 6 }) : new ZipPassThrough(e.name);
          zip.add(file);
          const blob = await e.open();
          if (!blob) {
            file.push(new Uint8Array(), true);
            continue;
          }
          const reader = blob.stream().getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            file.push(value, false);
          }
          file.push(new Uint8Array(), true);
        }
        zip.end();
      } catch (err) {
        controller.error(err);
      }
    },
    cancel() {
      zip?.terminate();
    },
  });
}
