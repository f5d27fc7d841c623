// Preview of a file fetched with the API key: images and PDFs through an object URL, text and JSON
// as text (never as HTML), anything else offered for download.
import { useEffect, useState } from "preact/hooks";
import { bytes, Problem, saveBlob } from "../ui";

const MAX_TEXT = 512 * 1024;

type Shown = { kind: "image" | "pdf"; url: string } | { kind: "text"; text: string } | { kind: "none" };

function kindOf(type: string, name: string): "image" | "pdf" | "text" | "none" {
  const t = type.split(";")[0].trim().toLowerCase();
  if (t.startsWith("image/") && t !== "image/svg+xml") return "image";
  if (t === "application/pdf" || /\.pdf$/i.test(name)) return "pdf";
  if (t.startsWith("text/") || t === "application/json" || t.endsWith("+json") || t === "application/xml" || /\.(txt|json|csv|md|ya?ml|xml|log)$/i.test(name)) return "text";
  return "none";
}

export function ArtifactPreview({ name, contentType, load }: { name: string; contentType: string; load(): Promise<Blob> }) {
  const [blob, setBlob] = useState<Blob | null>(null);
  const [shown, setShown] = useState<Shown | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loaded, setLoaded] = useState(false);
  useEffect(() => {
    let url: string | undefined;
    let live = true;
    load().then(
      async (b) => {
        if (!live) return;
        setBlob(b);
        const kind = kindOf(contentType || b.type, name);
        if (kind === "image" || kind === "pdf") {
          // The object URL gets the declared type, so the browser's PDF viewer and image decoder apply.
          url = URL.createObjectURL(new Blob([b], { type: kind === "pdf" ? "application/pdf" : contentType || b.type }));
          setShown({ kind, url });
        } else if (kind === "text") {
          let text = await b.slice(0, MAX_TEXT).text();
          if (/json/.test(contentType) || /\.json$/i.test(name)) {
            try {
              text = JSON.stringify(JSON.parse(text), null, 2);
            } catch {
              // shown as it is
            }
          }
          if (b.size > MAX_TEXT) text += `\n… (first ${bytes(MAX_TEXT)} of ${bytes(b.size)})`;
          setShown({ kind: "text", text });
        } else setShown({ kind: "none" });
      },
      (err) => live && setError(err),
    );
    return () => {
      live = false;
      // Later, not now: a PDF viewer still loading from the URL would see its request fail.
      if (url) setTimeout(URL.revokeObjectURL, 30_000, url);
    };
  }, [name]);

  return (
    <figure class="preview" aria-label={`Preview of ${name}`}>
      <figcaption>
        <strong>{name}</strong> {blob ? <span class="muted">{bytes(blob.size)}</span> : null}{" "}
        {blob ? (
          <button type="button" class="secondary" onClick={() => saveBlob(blob, name.split("/").pop() || "file")}>
            Download
          </button>
        ) : null}
      </figcaption>
      <Problem error={error} />
      {!shown && !error ? <div class="preview-box skeleton-row" aria-busy="true" /> : null}
      {shown?.kind === "image" ? <img class="preview-box" src={shown.url} alt={`Image ${name}`} data-loaded={loaded ? "true" : undefined} onLoad={() => setLoaded(true)} /> : null}
      {shown?.kind === "pdf" ? <iframe class="preview-box" src={shown.url} title={`PDF ${name}`} data-loaded={loaded ? "true" : undefined} onLoad={() => setLoaded(true)} /> : null}
      {shown?.kind === "text" ? (
        <pre class="preview-box text" tabIndex={0} data-testid="preview-text">
          {shown.text}
        </pre>
      ) : null}
      {shown?.kind === "none" ? <p class="muted">No preview for this type; download it instead.</p> : null}
    </figure>
  );
}
