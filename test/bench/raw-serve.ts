// The reference of the request-path benchmarks: Bun.serve answering a constant JSON, nothing else.
// Started like the servers (`--port N`, first stdout line `… listening on URL`).
const i = process.argv.indexOf("--port");
const s = Bun.serve({ port: i > 0 ? Number(process.argv[i + 1]) : 0, hostname: "127.0.0.1", fetch: () => new Response('{"status":"ok"}', { headers: { "content-type": "application/json" } }) });
console.log(`raw-serve listening on http://127.0.0.1:${s.port}`);
