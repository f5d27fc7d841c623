// The console's Files page on an S3-backed server (issue 40), in Debian's chromium driven by
// puppeteer-core against the compiled automation-server with --blobs s3://… on s3rver (loopback,
// another port: another origin): the page's CSP names the S3 endpoint's origin in connect-src, the
// upload session's presigned PUT goes straight to the bucket (whose CORS rules allow the console's
// origin, as docs/automation/s3.md tells operators to set) with its progress shown, and the file is
// listed and reads back whole. No CSP violation, failed request or console error on the way. And on a
// bucket without CORS rules the page says what to configure and aborts the session: nothing is stored.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "puppeteer-core";
import { type ConsoleBrowser, startConsoleBrowser } from "./console-browser";
import { startS3, type TestS3 } from "../support/s3";
import { startServer } from "./support";

type Json = Record<string, any>; // biome-ignore lint: test assertions index freely into response bodies

const KEY = "eak_demo_0123456789abcdefghijklmnopqrstuv";
const MiB = 1024 * 1024;
// What docs/automation/s3.md asks of the bucket (s3rver takes one `*` in an origin, as S3 does; the
// console's port is chosen by the server, so the rule names the host and any port).
const CORS = `<CORSConfiguration>
  <CORSRule>
    <AllowedOrigin>http://127.0.0.1:*</AllowedOrigin>
    <AllowedMethod>PUT</AllowedMethod>
    <AllowedHeader>content-type</AllowedHeader>
    <ExposeHeader>ETag</ExposeHeader>
    <MaxAgeSeconds>600</MaxAgeSeconds>
  </CORSRule>
</CORSConfiguration>`;

let s3: TestS3 | undefined;
let started: ConsoleBrowser | undefined;
let base = "";

beforeAll(async () => {
  s3 = await startS3("console", { cors: CORS });
  started = await startConsoleBrowser("automation-console-s3", ["--demo", "--blobs", `s3://${s3.bucket}/console/`, "--s3-endpoint", s3.endpoint], {
    ...s3.env,
    AUTOMATION_BLOBS: undefined,
  });
  base = started.base;
}, 180_000);

afterAll(async () => {
  await started?.close();
  await s3?.stop();
});

const api = async (method: string, path: string): Promise<Json> =>
  (await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${KEY}` } })).json() as Promise<Json>;
const bodyHas = (p: Page, s: string) => p.waitForFunction(`document.body.textContent.includes(${JSON.stringify(s)})`, { timeout: 60_000 });

test("the console's CSP names the S3 endpoint, and the Files page uploads straight to the bucket with its progress", async () => {
  const s3Origin = new URL(s3!.endpoint).origin;
  expect(s3Origin).not.toBe(new URL(base).origin);
  const csp = (await fetch(`${base}/`)).headers.get("content-security-policy")!;
  expect(csp).toContain(`connect-src 'self' ${s3Origin};`);

  const file = join(started!.dir, "report.bin");
  const data = new Uint8Array(20 * MiB);
  for (let i = 0; i < data.length; i += 4096) data[i] = (i >> 12) & 0xff;
  writeFileSync(file, data);

  const context = await started!.browser.createBrowserContext();
  try {
    const p = await context.newPage();
    const problems: string[] = [];
    const puts: string[] = [];
    p.on("console", (m) => void (m.type() === "error" && problems.push(`console error: ${m.text()}`)));
    p.on("pageerror", (e) => problems.push(`page error: ${(e as Error).message ?? String(e)}`));
    p.on("requestfailed", (r) => problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`));
    p.on("response", (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
      if (r.request().method() === "PUT") puts.push(r.url());
    });
    await p.setViewport({ width: 1280, height: 900 });
    await p.goto(`${base}/#/signin?key=${KEY}`);
    await p.waitForSelector('nav[aria-label="Main"]');
    await p.click('nav[aria-label="Main"] a[href="#/files"]');
    // Throttled to ~10 MB/s so the progress is seen on its way.
    await p.emulateNetworkConditions({ download: -1, upload: 10 * MiB, latency: 0 });
    const input = await p.waitForSelector("#upload-file");
    await (input as unknown as { uploadFile(path: string): Promise<void> }).uploadFile(file);
    await p.waitForFunction('(() => { const b = document.querySelector("#upload-progress"); return b && b.value > 0 && b.value < b.max; })()', { timeout: 30_000 });
    await bodyHas(p, "Uploaded report.bin (20.0 MiB)");
    await p.emulateNetworkConditions(null);
    await p.waitForSelector('tr[data-file="report.bin"]');

    // The bytes went to the bucket, not through the server.
    expect(puts.length).toBe(1);
    expect(new URL(puts[0]).origin).toBe(s3Origin);
    const listed = (await api("GET", "/v1/files")).data.find((f: Json) => f.filename === "report.bin");
    expect(listed.size).toBe(data.length);
    const back = new Uint8Array(await (await fetch(`${base}/v1/files/${listed.id}/content`, { headers: { authorization: `Bearer ${KEY}` } })).arrayBuffer());
    expect(back.length).toBe(data.length);
    expect(Bun.hash(back)).toBe(Bun.hash(data));
    expect(problems).toEqual([]);
  } finally {
    await context.close().catch(() => {});
  }
}, 180_000);

test("a bucket without CORS rules: the page names the cause and the session is aborted, no file is stored", async () => {
  const bare = await startS3("bare");
  const server = await startServer([join(started!.dir, "automation-server"), "--demo", "--host", "127.0.0.1", "--data-dir", join(started!.dir, "bare-data"), "--blobs", `s3://${bare.bucket}/console/`, "--s3-endpoint", bare.endpoint], {
    cwd: started!.dir,
    env: { ...bare.env, AUTOMATION_DATA_DIR: undefined, AUTOMATION_BLOBS: undefined, AUTOMATION_CONSOLE: undefined },
  });
  const context = await started!.browser.createBrowserContext();
  try {
    const file = join(started!.dir, "small.bin");
    writeFileSync(file, new Uint8Array(64 * 1024));
    const p = await context.newPage();
    await p.goto(`${server.url}/#/signin?key=${KEY}`);
    await p.waitForSelector('nav[aria-label="Main"]');
    await p.click('nav[aria-label="Main"] a[href="#/files"]');
    const input = await p.waitForSelector("#upload-file");
    await (input as unknown as { uploadFile(path: string): Promise<void> }).uploadFile(file);
    await bodyHas(p, "the bucket's CORS rules must allow PUT from");
    const files = (await (await fetch(`${server.url}/v1/files`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as Json;
    expect(files.data.some((f: Json) => f.filename === "small.bin")).toBe(false);
  } finally {
    await context.close().catch(() => {});
    await server.kill("SIGKILL");
    await bare.stop();
  }
}, 180_000);
