// Obsolete: scripts no longer run on worker threads (see isolate.ts: a thread busy in QuickJS cannot be
// stopped, a child process can). This empty module remains only because src/kernel/build.ts and
// test/e2e/support.ts still pass it as an extra entrypoint; delete it together with those entries.
export {};
