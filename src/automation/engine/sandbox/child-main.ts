// Entry of the sandbox child process when running from source (`bun bin/automation-server.ts`, tests):
// compiled executables dispatch the hidden `__sandbox` subcommand instead (see isolate.ts).
import { serveSandbox } from "./child";

await serveSandbox(Number(process.argv[2]));
