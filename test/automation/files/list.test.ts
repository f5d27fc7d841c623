// GET /v1/files (ours, for the console's Files page): the tenant's files newest first, pages with a
// total, a purpose filter; expired run inputs and other tenants' files are left out.
import { expect, test } from "bun:test";
import { filesHarness, json } from "./support";

test("lists the tenant's files newest first with a total; purpose filters; expired and foreign files are left out", async () => {
  const h = await filesHarness();
  const t = await h.tenant("acme");
  const other = await h.tenant("other");
  for (const name of ["a.txt", "b.txt", "c.txt"]) {
    await h.upload(t.key, name, name);
    h.clock.advance(1000);
  }
  await h.upload(t.key, "in", "input.pdf", { purpose: "run-input" });
  await h.upload(other.key, "theirs", "theirs.txt");
  const all = await json(await h.req("GET", "/v1/files", { key: t.key }));
  expect(all).toMatchObject({ total: 4, limit: 50, offset: 0 });
  expect(all.data.map((f: { filename: string }) => f.filename)).toEqual(["input.pdf", "c.txt", "b.txt", "a.txt"]);
  expect(Object.keys(all.data[0]).sort()).toEqual(["contentType", "createdAt", "filename", "id", "purpose", "size"]);

  const page = await json(await h.req("GET", "/v1/files?limit=2&offset=1", { key: t.key }));
  expect(page.data.map((f: { filename: string }) => f.filename)).toEqual(["c.txt", "b.txt"]);
  expect(page.total).toBe(4);
  const inputs = await json(await h.req("GET", "/v1/files?purpose=run-input", { key: t.key }));
  expect(inputs.data.map((f: { filename: string }) => f.filename)).toEqual(["input.pdf"]);

  // A run input expires after 24 h: it is no longer listed.
  h.clock.advance(25 * 60 * 60 * 1000);
  expect((await json(await h.req("GET", "/v1/files", { key: t.key }))).total).toBe(3);

  expect((await h.req("GET", "/v1/files?limit=0", { key: t.key })).status).toBe(400);
  expect((await h.req("GET", "/v1/files?purpose=Not%20A%20Label", { key: t.key })).status).toBe(400);
  expect((await h.req("GET", "/v1/files", { key: await h.key(t.id, ["runs:read"]) })).status).toBe(403);
  expect((await h.req("GET", "/v1/files", { key: await h.key(t.id, ["files:read"]) })).status).toBe(200);
  expect((await h.req("GET", "/v1/files")).status).toBe(401);
});
