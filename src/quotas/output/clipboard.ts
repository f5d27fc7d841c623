// Copy text with the system clipboard tool that exists here (the TUI also sends OSC 52 itself).
import type { Env } from "../core/context";

export function clipboardCommands(env: Env, which: (bin: string) => string | null = (b) => Bun.which(b)): string[][] {
  const all: [boolean, string[]][] = [
    [Boolean(env.WAYLAND_DISPLAY), ["wl-copy"]],
    [Boolean(env.DISPLAY), ["xclip", "-selection", "clipboard"]],
    [Boolean(env.DISPLAY), ["xsel", "--clipboard", "--input"]],
    [process.platform === "darwin", ["pbcopy"]],
  ];
  return all.filter(([ok, cmd]) => ok && which(cmd[0])).map(([, cmd]) => cmd);
}

export async function copyToClipboard(text: string, env: Env): Promise<boolean> {
  for (const cmd of clipboardCommands(env)) {
    try {
      const p = Bun.spawn(cmd, { stdin: "pipe", stdout: "ignore", stderr: "ignore" });
      p.stdin.write(text);
      await p.stdin.end();
      const code = await Promise.race([p.exited, Bun.sleep(2000).then(() => -1)]);
      if (code === 0) return true;
      if (code === -1) p.kill();
    } catch {}
  }
  return false;
}
