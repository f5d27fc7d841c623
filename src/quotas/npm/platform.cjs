"use strict";
// Finds the executable of this machine's platform package (an optional dependency of `quotas`; npm
// installs only the one whose os/cpu/libc match). PACKAGES is filled in when the package is written.
const fs = require("fs");
const path = require("path");

const PACKAGES = /* PACKAGES */ {};

function executable() {
  const names = PACKAGES[`${process.platform} ${process.arch}`] || [];
  const file = process.platform === "win32" ? "quotas.exe" : "quotas";
  for (const name of names) {
    let dir;
    try {
      dir = path.dirname(require.resolve(`${name}/package.json`));
    } catch {
      continue;
    }
    const exe = path.join(dir, "bin", file);
    if (fs.existsSync(exe)) return exe;
  }
  const why = names.length
    ? `none of ${names.join(", ")} is installed (were optional dependencies omitted? reinstall without --omit=optional / --no-optional)`
    : "no release for this platform";
  throw new Error(`no quotas executable for ${process.platform}-${process.arch}: ${why}`);
}

module.exports = { executable };
