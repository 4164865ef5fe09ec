#!/usr/bin/env python3
"""Builds the packages of mcp-server-tmux from a compiled binary.

    build.py version                          the crate's version (Cargo.toml)
    build.py npm-main OUT                     the npm launcher package, staged in OUT
    build.py npm-platform OS CPU BINARY OUT   one npm platform package (os: linux|darwin,
                                              cpu: x64|arm64), staged in OUT
    build.py mcpb OUT.mcpb OS=BINARY...       the MCP bundle, one binary per platform
                                              (OS: linux|darwin)
    build.py archive BINARY TARGET OUTDIR     the release archive cargo-binstall fetches:
                                              mcp-server-tmux-TARGET.tar.gz + .sha256

Only the standard library: CI (scripts/packages.sh) and the release workflow
(.github/workflows/release.yml) run the same steps. Every package carries the
crate's version; `npm-main` refuses a package.json whose version or pinned
optional dependencies disagree with it.
"""

import hashlib
import io
import json
import re
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "mcp-server-tmux"
NPM_PLATFORMS = [("darwin", "arm64"), ("darwin", "x64"), ("linux", "arm64"), ("linux", "x64")]


def version() -> str:
    text = (ROOT / "Cargo.toml").read_text()
    package = text.split("[package]", 1)[1].split("\n[", 1)[0]
    return re.search(r'^version = "([^"]+)"', package, re.M).group(1)


def npm_main(out: Path) -> None:
    src = ROOT / "packaging" / "npm" / NAME
    manifest = json.loads((src / "package.json").read_text())
    want = version()
    if manifest["version"] != want:
        sys.exit(f"packaging/npm/{NAME}/package.json has version {manifest['version']}, Cargo.toml {want}")
    expected = {f"{NAME}-{os}-{cpu}": want for os, cpu in NPM_PLATFORMS}
    if manifest["optionalDependencies"] != expected:
        sys.exit(f"optionalDependencies must pin every platform package to {want}: {expected}")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(src, out)
    shutil.copy(ROOT / "README.md", out / "README.md")
    shutil.copy(ROOT / "LICENSE", out / "LICENSE")


# The binary embeds GNU Unifont (src/picture/font.rs): its licence goes
# wherever the binary does.
FONT_LICENSE = ROOT / "assets" / "fonts" / "LICENSE-unifont.txt"


def npm_platform(os: str, cpu: str, binary: Path, out: Path) -> None:
    if (os, cpu) not in NPM_PLATFORMS:
        sys.exit(f"no npm package for {os} {cpu}: {NPM_PLATFORMS}")
    name = f"{NAME}-{os}-{cpu}"
    shutil.rmtree(out, ignore_errors=True)
    (out / "bin").mkdir(parents=True)
    shutil.copy(binary, out / "bin" / NAME)
    (out / "bin" / NAME).chmod(0o755)
    shutil.copy(ROOT / "LICENSE", out / "LICENSE")
    shutil.copy(FONT_LICENSE, out / FONT_LICENSE.name)
    manifest = {
        "name": name,
        "version": version(),
        "description": f"The {os} {cpu} binary of {NAME} (installed by the {NAME} package)",
        "license": "MIT",
        "repository": json.loads((ROOT / "packaging" / "npm" / NAME / "package.json").read_text())["repository"],
        "os": [os],
        "cpu": [cpu],
        "files": [f"bin/{NAME}", "LICENSE", FONT_LICENSE.name],
        "preferUnplugged": True,
    }
    (out / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (out / "README.md").write_text(
        f"# {name}\n\nThe `{NAME}` binary for {os} on {cpu}. Install `{NAME}` instead: "
        f"`npx -y {NAME}` picks this package on this platform.\n"
    )


def _zip_add(archive: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def mcpb(out: Path, binaries: dict) -> None:
    """A zip with manifest.json at its root and server/<os>/mcp-server-tmux:
    the manifest's per-platform command picks the one for the host."""
    manifest = json.loads((ROOT / "packaging" / "mcpb" / "manifest.json").read_text())
    manifest["version"] = version()
    platforms = sorted(binaries)
    manifest["compatibility"]["platforms"] = platforms
    # The default command is darwin's (Claude Desktop's platform); the entry
    # point names a binary the bundle holds.
    entry = "darwin" if "darwin" in binaries else platforms[0]
    manifest["server"]["entry_point"] = f"server/{entry}/{NAME}"
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w") as archive:
        _zip_add(archive, "manifest.json", (json.dumps(manifest, indent=2) + "\n").encode(), 0o644)
        for os in platforms:
            _zip_add(archive, f"server/{os}/{NAME}", Path(binaries[os]).read_bytes(), 0o755)
        _zip_add(archive, "LICENSE", (ROOT / "LICENSE").read_bytes(), 0o644)
        _zip_add(archive, FONT_LICENSE.name, FONT_LICENSE.read_bytes(), 0o644)
        _zip_add(archive, "README.md", (ROOT / "README.md").read_bytes(), 0o644)


def archive(binary: Path, target: str, outdir: Path) -> None:
    """`mcp-server-tmux-<target>.tar.gz` holding both names at its root, as
    Cargo.toml's [package.metadata.binstall] expects, and its .sha256."""
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / f"{NAME}-{target}.tar.gz"
    data = Path(binary).read_bytes()
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo(NAME)
        info.size, info.mode, info.mtime = len(data), 0o755, 0
        tar.addfile(info, io.BytesIO(data))
        # The second name is a hard link: one copy of the binary to download.
        link = tarfile.TarInfo("tmux-mcp")
        link.type, link.linkname, link.mode, link.mtime = tarfile.LNKTYPE, NAME, 0o755, 0
        tar.addfile(link)
        for extra in ("LICENSE", "README.md"):
            tar.add(ROOT / extra, arcname=extra)
        tar.add(FONT_LICENSE, arcname=FONT_LICENSE.name)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    (outdir / f"{path.name}.sha256").write_text(f"{digest}  {path.name}\n")


def main(argv: list) -> None:
    match argv:
        case ["version"]:
            print(version())
        case ["npm-main", out]:
            npm_main(Path(out))
        case ["npm-platform", os, cpu, binary, out]:
            npm_platform(os, cpu, Path(binary), Path(out))
        case ["mcpb", out, *pairs] if pairs:
            mcpb(Path(out), dict(pair.split("=", 1) for pair in pairs))
        case ["archive", binary, target, outdir]:
            archive(Path(binary), target, Path(outdir))
        case _:
            sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
