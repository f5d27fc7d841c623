// The console's CSP on a server whose blobs are on S3 (s3rver on loopback): `connect-src` names the S3
// endpoint's origin, exactly the origin upload sessions' presigned URLs point at, and nothing broader;
// on the disk store it stays `'self'` alone.
import { describe, expect, test } from "bun:test";
import { consoleCsp, cspOrigin } from "../../../src/automation/console/serve";
import { harness, json } from "../app/harness";
import { testS3, withS3 } from "../files/stores";

withS3();

const connectSrc = (csp: string) => csp.split("; ").find((d) => d.startsWith("connect-src "));

describe("console CSP and S3 storage", () => {
  test("blobs on S3: connect-src is 'self' and the S3 endpoint's origin, the page and its assets alike", async () => {
    const s3 = await testS3();
    const origin = new URL(s3.endpoint).origin;
    const h = await harness({}, "s3");
    const page = await h.req("GET", "/");
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy")!;
    expect(connectSrc(csp)).toBe(`connect-src 'self' ${origin}`);
    // Only connect-src changes: scripts, frames and the rest stay this server's own.
    expect(csp).toBe(consoleCsp(origin));
    expect(csp.replace(` ${origin}`, "")).toBe(consoleCsp());
    const asset = /(?:src|href)="\.?(\/chunk-[\w-]+\.js)"/.exec(await page.text())![1];
    expect((await h.req("GET", asset)).headers.get("content-security-policy")).toBe(csp);

    // The origin allowed is the one an upload session sends the browser to.
    const { key } = await h.tenant("csp-s3");
    const session = await json(await h.req("POST", "/v1/files/uploads", { key, body: { filename: "a.bin", contentType: "application/octet-stream", size: 10, transport: "presigned-put" } }));
    expect(session.transport).toBe("presigned-put");
    expect(new URL(session.url).origin).toBe(origin);
  });

  test("blobs on disk: connect-src is 'self' alone", async () => {
    const h = await harness();
    const csp = (await h.req("GET", "/")).headers.get("content-security-policy")!;
    expect(connectSrc(csp)).toBe("connect-src 'self'");
    expect(csp).toBe(consoleCsp());
  });

  test("only an origin reaches the header", () => {
    expect(cspOrigin("https://minio.internal:9000")).toBe("https://minio.internal:9000");
    expect(cspOrigin("http://[::1]:9000")).toBe("http://[::1]:9000");
    expect(cspOrigin("https://s3.eu-west-1.amazonaws.com")).toBe("https://s3.eu-west-1.amazonaws.com");
    for (const bad of [undefined, "", "*", "https://*.amazonaws.com", "https://a.example; script-src *", "https://a.example/path", "ftp://a.example", "https://a b"]) {
      expect(cspOrigin(bad)).toBeUndefined();
    }
  });
});
