#!/usr/bin/env bash
# Builds every package of mcp-server-tmux from this checkout and installs
# each one the way a person would, with no network but the package
# registries (and those only for the tools below): the crate (cargo package,
# then cargo install of the unpacked package, then its `doctor`), the
# Linux x86_64 wheel (into a fresh venv with pip --no-index, with
# `uv tool install` from the file, and through `uvx` from a local
# find-links folder), the npm launcher and linux-x64 packages (npm pack,
# installed from the tarballs with no registry, run through npx), the MCP
# bundle (mcpb validate, then its binary run under the bundle's default
# settings), the release archive cargo-binstall fetches, and server.json.
# Each installed program answers an MCP initialize + tools/list
# (packaging/mcp_smoke.py). Called by .ci/run after scripts/test, whose
# `cargo build --release` it reuses: 18 s here with the tools installed, 36 s
# the first time (maturin, uv and the mcpb CLI from the
# registries into target/pkg-tools). Output and sizes in target/packages/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/target/packages
tools=$root/target/pkg-tools
rm -rf "$out"
mkdir -p "$out"
version=$(python3 packaging/build.py version)
smoke() { python3 "$root/packaging/mcp_smoke.py" -- "$@"; }
step() { printf '\n== %s (%ss)\n' "$1" "$SECONDS"; }

step "tools from the registries"
if [ ! -x "$tools/venv/bin/maturin" ] || [ ! -x "$tools/venv/bin/uv" ]; then
  python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install -q maturin==1.16.0 uv==0.13.8
fi
if [ ! -x "$tools/npm/node_modules/.bin/mcpb" ]; then
  mkdir -p "$tools/npm"
  (cd "$tools/npm" && npm install -q --no-audit --no-fund @anthropic-ai/mcpb@2.1.2 >/dev/null)
fi
export PATH="$tools/venv/bin:$PATH"
mcpb=$tools/npm/node_modules/.bin/mcpb

step "server.json and the names in every package"
(cd packaging && python3 -m unittest -q test_check)
python3 packaging/check.py server-json
python3 packaging/check.py names

# A private tmux server for `doctor`, gone at exit.
sock=pkgs-$$
tmux -L "$sock" -f /dev/null new-session -d -s pkgs
trap 'tmux -L "$sock" kill-server 2>/dev/null || true' EXIT

step "crates.io: cargo package, then cargo install of the unpacked package"
cargo package --no-verify --allow-dirty --quiet
cargo package --list --allow-dirty >"$out/crate-files.txt"
if grep -E '^(fixtures|tests|bench|packaging|scripts|protocol|examples)/' "$out/crate-files.txt"; then
  echo "the crate holds files it does not need (above): Cargo.toml's include" >&2
  exit 1
fi
mkdir -p "$out/crate"
tar -xzf "target/package/mcp-server-tmux-$version.crate" -C "$out/crate"
# The unpacked package builds in the same target directory, so cargo reuses
# scripts/test's release build when the package holds every file that build
# read (cargo's dep-info paths are relative to the package root, and the
# .crate's files carry an old fixed mtime); a file missing from the package
# makes the unit stale, and the rebuild then fails as it would for a user.
cargo install --locked --quiet --path "$out/crate/mcp-server-tmux-$version" \
  --root "$out/cargo-root" --target-dir target
LIBTMUX_SOCKET=$sock "$out/cargo-root/bin/mcp-server-tmux" doctor >"$out/doctor.txt"
tail -1 "$out/doctor.txt"
"$out/cargo-root/bin/tmux-mcp" --version

step "release binary"
cargo build --release --quiet
bin=target/release/mcp-server-tmux
[ "$("$bin" --version)" = "mcp-server-tmux $version" ]

step "PyPI: the wheel (maturin, bindings = bin)"
maturin build --release --quiet --out "$out/wheels" 2>&1 | grep -v '^$' | tail -3
wheel=$(ls "$out"/wheels/mcp_server_tmux-"$version"-py3-none-*.whl)
python3 -m zipfile -l "$wheel" | awk '{print $1}' | grep -q 'data/scripts/mcp-server-tmux$'
python3 -m zipfile -l "$wheel" | awk '{print $1}' | grep -q 'data/scripts/tmux-mcp$'
python3 -m venv "$out/venv-wheel"
"$out/venv-wheel/bin/pip" install -q --no-index "$wheel"
"$out/venv-wheel/bin/mcp-server-tmux" --version
"$out/venv-wheel/bin/tmux-mcp" --version
smoke "$out/venv-wheel/bin/mcp-server-tmux"
export UV_CACHE_DIR=$out/uv-cache UV_TOOL_DIR=$out/uv-tools UV_TOOL_BIN_DIR=$out/uv-bin
uv tool install --offline --quiet "$wheel"
"$out/uv-bin/mcp-server-tmux" --version
smoke "$out/uv-bin/mcp-server-tmux"
# uvx resolves the name as `uvx mcp-server-tmux` does from PyPI, here from
# a folder: the first run fills the cache, the second is the warm start.
uvx --offline --no-index --find-links "$out/wheels" mcp-server-tmux --version
smoke uvx --offline --no-index --find-links "$out/wheels" mcp-server-tmux | tee "$out/uvx-warm.txt"

step "npm: the launcher and the linux-x64 package, from their tarballs"
python3 packaging/build.py npm-main "$out/npm/mcp-server-tmux"
python3 packaging/build.py npm-platform linux x64 "$bin" "$out/npm/mcp-server-tmux-linux-x64"
for pkg in mcp-server-tmux mcp-server-tmux-linux-x64; do
  (cd "$out/npm/$pkg" && npm pack --silent --pack-destination "$out/npm" >/dev/null)
done
app=$out/npm/app
mkdir -p "$app"
echo '{"name": "app", "private": true}' >"$app/package.json"
# No registry: a dead address and --offline, so only the tarballs can serve.
# The three other platform packages are optional dependencies npm cannot
# fetch here; npm skips those, as it skips the ones whose os/cpu differ.
(cd "$app" && npm install --offline --no-audit --no-fund --loglevel=error \
  --registry http://127.0.0.1:9/ \
  "$out/npm/mcp-server-tmux-$version.tgz" "$out/npm/mcp-server-tmux-linux-x64-$version.tgz")
(cd "$app" && npx --offline --registry http://127.0.0.1:9/ mcp-server-tmux --version)
(cd "$app" && smoke npx --offline --registry http://127.0.0.1:9/ mcp-server-tmux)
# Without its platform package the launcher says what to do.
lonely=$out/npm/lonely
mkdir -p "$lonely/node_modules/mcp-server-tmux"
cp -r "$out/npm/mcp-server-tmux/." "$lonely/node_modules/mcp-server-tmux/"
if node "$lonely/node_modules/mcp-server-tmux/bin/mcp-server-tmux.js" --version 2>"$out/npm/lonely.txt"; then
  echo "the launcher ran with no platform package" >&2
  exit 1
fi
grep -q "mcp-server-tmux-linux-x64, which holds the binary for this machine, is not installed" "$out/npm/lonely.txt"
# On a platform with no package (Windows here, by pretending) it says so.
if node -e 'Object.defineProperty(process, "platform", { value: "win32" }); require(process.argv[1])' \
  "$lonely/node_modules/mcp-server-tmux/bin/mcp-server-tmux.js" 2>"$out/npm/win32.txt"; then
  echo "the launcher ran on win32" >&2
  exit 1
fi
grep -q "no prebuilt binary for win32 x64" "$out/npm/win32.txt"

step "the MCP bundle"
"$mcpb" validate packaging/mcpb/manifest.json
python3 packaging/build.py mcpb "$out/mcp-server-tmux.mcpb" "linux=$bin"
mkdir -p "$out/mcpb-unpacked"
python3 -m zipfile -e "$out/mcp-server-tmux.mcpb" "$out/mcpb-unpacked"
"$mcpb" validate "$out/mcpb-unpacked/manifest.json"
chmod +x "$out/mcpb-unpacked/server/linux/mcp-server-tmux" # zipfile -e drops modes
python3 packaging/check.py mcpb-env "$out/mcpb-unpacked/server/linux/mcp-server-tmux"
smoke "$out/mcpb-unpacked/server/linux/mcp-server-tmux"

step "the release archive (cargo binstall)"
python3 packaging/build.py archive "$bin" x86_64-unknown-linux-gnu "$out/release"
(cd "$out/release" && sha256sum -c --quiet ./*.sha256)
mkdir -p "$out/release/unpacked"
tar -xzf "$out/release/mcp-server-tmux-x86_64-unknown-linux-gnu.tar.gz" -C "$out/release/unpacked"
"$out/release/unpacked/mcp-server-tmux" --version
"$out/release/unpacked/tmux-mcp" --version

step "sizes"
{
  printf 'binary (stripped)\t%s\n' "$(stat -c %s "$bin")"
  printf 'wheel\t%s\n' "$(stat -c %s "$wheel")"
  printf 'npm mcp-server-tmux\t%s\n' "$(stat -c %s "$out/npm/mcp-server-tmux-$version.tgz")"
  printf 'npm mcp-server-tmux-linux-x64\t%s\n' "$(stat -c %s "$out/npm/mcp-server-tmux-linux-x64-$version.tgz")"
  printf 'mcpb (linux only)\t%s\n' "$(stat -c %s "$out/mcp-server-tmux.mcpb")"
  printf 'release archive\t%s\n' "$(stat -c %s "$out/release/mcp-server-tmux-x86_64-unknown-linux-gnu.tar.gz")"
} | tee "$out/sizes.tsv"
echo "packages: all checks passed in ${SECONDS}s"
