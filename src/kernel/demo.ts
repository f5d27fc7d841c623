// `bun run demo`: starts every server product with its demo data, side by side, and says how to reach them.
import { existsSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "../..");
const servers = [
  { bin: "order-server", args: ["--profile", "demo", "--db", "./data/orders-demo.db"] },
  { bin: "automation-server", args: ["--demo", "--data-dir", "./data/automation-demo"] },
].filter((s) => existsSync(join(root, "bin", `${s.bin}.ts`)));

const children = servers.map((s) =>
  Bun.spawn([process.execPath, join("bin", `${s.bin}.ts`), ...s.args], {
    cwd: root,
    stdout: "inherit",
    stderr: "inherit",
  }),
);
if (existsSync(join(root, "bin", "quotas.ts"))) {
  console.log("quotas: try `bun bin/quotas.ts --json --pretty` (reads the credentials on this machine)");
}
const stop = () => {
  for (const c of children) c.kill("SIGTERM");
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
const codes = await Promise.all(children.map((c) => c.exited));
process.exit(codes.some((c) => c !== 0 && c !== null) ? 1 : 0);
