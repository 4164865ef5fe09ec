#!/usr/bin/env node
// Runs the mcp-server-tmux binary from the one platform package npm
// installed beside this one (an optional dependency whose "os" and "cpu"
// match this machine; the pattern of esbuild and Biome). stdin, stdout and
// stderr are the child's own: this process only waits and passes signals.
"use strict";

const { spawn } = require("child_process");
const path = require("path");

const PACKAGES = {
  "darwin arm64": "mcp-server-tmux-darwin-arm64",
  "darwin x64": "mcp-server-tmux-darwin-x64",
  "linux arm64": "mcp-server-tmux-linux-arm64",
  "linux x64": "mcp-server-tmux-linux-x64",
};

function fail(message) {
  process.stderr.write(`mcp-server-tmux: ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  const platform = `${process.platform} ${process.arch}`;
  const name = PACKAGES[platform];
  if (!name) {
    fail(
      `no prebuilt binary for ${process.platform} ${process.arch}: the npm packages ` +
        `cover ${Object.keys(PACKAGES).join(", ")}. Elsewhere, build it from source ` +
        "with a Rust toolchain: cargo install mcp-server-tmux",
    );
  }
  try {
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", "mcp-server-tmux");
  } catch {
    fail(
      `the package ${name}, which holds the binary for this machine, is not installed. ` +
        "npm skips optional dependencies with --omit=optional (or --no-optional) or when " +
        `they failed to download: reinstall without that, or add it yourself (npm install ${name}).`,
    );
  }
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => fail(`cannot run the binary: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
