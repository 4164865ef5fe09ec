#!/usr/bin/env python3
"""Checks the registry entry and the packages' metadata, with no network.

    check.py server-json [PATH]     server.json against the MCP Registry's rules
    check.py names                  the registry name and versions agree in every package
    check.py mcpb-env BINARY        the bundle's settings, at their defaults, start BINARY

`server-json` stands for the published schema
(static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json), which
no registry package ships: it checks the field rules that schema and the
registry's publishing requirements state, as written down in
docs/releasing.md (required fields and their lengths and patterns, the
package fields and their allowed values, transports, environment variables,
no unknown keys). The mcpb manifest is checked by the bundle tool's own
`mcpb validate` (scripts/packages.sh); `mcpb-env` adds what a schema cannot
see: that the settings' defaults are values this server accepts.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import build  # noqa: E402

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
NAME_RE = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
REGISTRY_TYPES = {"npm", "pypi", "nuget", "oci", "mcpb", "cargo", "go"}
RUNTIME_HINTS = {"npx", "uvx", "docker", "dnx"}
TRANSPORTS = {"stdio", "streamable-http", "sse"}
TOP_KEYS = {"$schema", "name", "description", "version", "title", "websiteUrl", "repository",
            "icons", "packages", "remotes", "_meta"}
PACKAGE_KEYS = {"registryType", "identifier", "version", "registryBaseUrl", "fileSha256",
                "runtimeHint", "runtimeArguments", "packageArguments", "environmentVariables",
                "transport"}
ENV_KEYS = {"name", "description", "isRequired", "isSecret", "default", "choices", "format",
            "value", "variables"}
REPOSITORY_KEYS = {"url", "source", "id", "subfolder"}


def server_json_errors(doc: dict) -> list:
    """Every rule `doc` breaks, as readable lines (empty: valid)."""
    errors = []

    def string(where, value, lo=1, hi=None):
        if not isinstance(value, str):
            errors.append(f"{where}: must be a string")
            return False
        if len(value) < lo or (hi is not None and len(value) > hi):
            errors.append(f"{where}: length {len(value)} outside {lo}..{hi}")
            return False
        return True

    if not isinstance(doc, dict):
        return ["the document must be an object"]
    for key in sorted(set(doc) - TOP_KEYS):
        errors.append(f"unknown key {key!r}")
    for key in ("name", "description", "version"):
        if key not in doc:
            errors.append(f"missing required {key!r}")
    if "$schema" in doc and doc["$schema"] != SCHEMA:
        errors.append(f"$schema: expected {SCHEMA}")
    if "name" in doc and string("name", doc["name"], 3, 200) and not NAME_RE.match(doc["name"]):
        errors.append("name: must be reverse-DNS namespace/name with exactly one '/'")
    if "description" in doc:
        string("description", doc["description"], 1, 100)
    if "title" in doc:
        string("title", doc["title"], 1, 100)
    if "version" in doc and string("version", doc["version"], 1, 255):
        if doc["version"] == "latest" or re.search(r"[\^~<>=*|xX ]|\.x\b", doc["version"]):
            errors.append("version: a specific version, no range and not 'latest'")
    if "websiteUrl" in doc and not str(doc["websiteUrl"]).startswith("https://"):
        errors.append("websiteUrl: must be an https URL")
    repo = doc.get("repository")
    if repo is not None:
        if not isinstance(repo, dict) or not {"url", "source"} <= set(repo):
            errors.append("repository: needs url and source")
        else:
            for key in sorted(set(repo) - REPOSITORY_KEYS):
                errors.append(f"repository: unknown key {key!r}")
    packages = doc.get("packages", [])
    if not isinstance(packages, list):
        return errors + ["packages: must be an array"]
    for i, package in enumerate(packages):
        where = f"packages[{i}]"
        if not isinstance(package, dict):
            errors.append(f"{where}: must be an object")
            continue
        for key in sorted(set(package) - PACKAGE_KEYS):
            errors.append(f"{where}: unknown key {key!r}")
        for key in ("registryType", "identifier", "transport"):
            if key not in package:
                errors.append(f"{where}: missing required {key!r}")
        kind = package.get("registryType")
        if kind is not None and kind not in REGISTRY_TYPES:
            errors.append(f"{where}.registryType: {kind!r} not one of {sorted(REGISTRY_TYPES)}")
        if "identifier" in package:
            string(f"{where}.identifier", package["identifier"])
        if "version" in package:
            string(f"{where}.version", package["version"])
            if package["version"] == "latest":
                errors.append(f"{where}.version: must not be 'latest'")
            if "version" in doc and package["version"] != doc["version"]:
                errors.append(f"{where}.version: {package['version']} is not the server's {doc['version']}")
        if kind == "mcpb" and "fileSha256" not in package:
            errors.append(f"{where}: an mcpb package needs fileSha256")
        hint = package.get("runtimeHint")
        if hint is not None and hint not in RUNTIME_HINTS:
            errors.append(f"{where}.runtimeHint: {hint!r} not one of {sorted(RUNTIME_HINTS)}")
        transport = package.get("transport")
        if transport is not None:
            if not isinstance(transport, dict) or transport.get("type") not in TRANSPORTS:
                errors.append(f"{where}.transport.type: not one of {sorted(TRANSPORTS)}")
        for j, var in enumerate(package.get("environmentVariables", [])):
            vwhere = f"{where}.environmentVariables[{j}]"
            if not isinstance(var, dict) or "name" not in var:
                errors.append(f"{vwhere}: needs a name")
                continue
            for key in sorted(set(var) - ENV_KEYS):
                errors.append(f"{vwhere}: unknown key {key!r}")
            for flag in ("isRequired", "isSecret"):
                if flag in var and not isinstance(var[flag], bool):
                    errors.append(f"{vwhere}.{flag}: must be a boolean")
    return errors


def names_errors() -> list:
    """The registry's ownership proofs and the versions, package by package:
    npm's `mcpName`, the README's visible `mcp-name:` line (PyPI and
    crates.io read the README; crates.io drops HTML comments, so it is plain
    text), and one version everywhere."""
    errors = []
    server = json.loads((ROOT / "server.json").read_text())
    name, version = server["name"], build.version()
    if server["version"] != version:
        errors.append(f"server.json version {server['version']} is not Cargo.toml's {version}")
    readme = (ROOT / "README.md").read_text()
    visible = re.sub(r"<!--.*?-->", "", readme, flags=re.S)
    if f"mcp-name: {name}" not in visible:
        errors.append(f"README.md lacks the visible line 'mcp-name: {name}'")
    npm = json.loads((ROOT / "packaging" / "npm" / build.NAME / "package.json").read_text())
    if npm.get("mcpName") != name:
        errors.append(f"npm package.json mcpName {npm.get('mcpName')!r} is not {name!r}")
    if npm["version"] != version:
        errors.append(f"npm package.json version {npm['version']} is not {version}")
    manifest = json.loads((ROOT / "packaging" / "mcpb" / "manifest.json").read_text())
    if manifest["version"] != version:
        errors.append(f"mcpb manifest version {manifest['version']} is not {version}")
    plugin = json.loads((ROOT / "plugins" / build.NAME / ".claude-plugin" / "plugin.json").read_text())
    if plugin["version"] != version:
        errors.append(f"Claude Code plugin version {plugin['version']} is not {version}")
    launch = json.loads((ROOT / "plugins" / build.NAME / ".mcp.json").read_text())["mcpServers"]["tmux"]
    if [launch["command"], *launch["args"]] != ["uvx", build.NAME]:
        errors.append(f"the plugin's .mcp.json runs {launch}, not uvx {build.NAME}")
    for package in server.get("packages", []):
        if package.get("identifier") != build.NAME and package.get("registryType") != "mcpb":
            errors.append(f"server.json names package {package.get('identifier')!r}")
    return errors


def mcpb_env(binary: str) -> int:
    """Runs `BINARY tools` with the environment the bundle's manifest gives
    it when every setting keeps its default: a default the server refuses
    would stop it at start in Claude Desktop."""
    manifest = json.loads((ROOT / "packaging" / "mcpb" / "manifest.json").read_text())
    defaults = {key: spec.get("default", "") for key, spec in manifest["user_config"].items()}

    def value(template: str) -> str:
        def one(match):
            default = defaults[match.group(1)]
            return str(int(default)) if isinstance(default, float) and default.is_integer() else str(default)
        return re.sub(r"\$\{user_config\.([a-z_]+)\}", one, template)

    env = {k: v for k, v in os.environ.items() if not k.startswith(("LIBTMUX_", "TMUX"))}
    env.update({k: value(v) for k, v in manifest["server"]["mcp_config"]["env"].items()})
    env["LIBTMUX_SOCKET"] = env["LIBTMUX_SOCKET"] or f"mcpb-env-{os.getpid()}"
    done = subprocess.run([binary, "tools"], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"the bundle's default settings stop the server:\n{done.stderr}", file=sys.stderr)
        return 1
    print(f"ok: the bundle's default settings start {binary} ({len(env)} variables)")
    return 0


def main(argv: list) -> int:
    match argv:
        case ["server-json", *path]:
            target = Path(path[0]) if path else ROOT / "server.json"
            errors = server_json_errors(json.loads(target.read_text()))
        case ["names"]:
            errors = names_errors()
        case ["mcpb-env", binary]:
            return mcpb_env(binary)
        case _:
            sys.exit(__doc__)
    for error in errors:
        print(f"{argv[0]}: {error}", file=sys.stderr)
    if not errors:
        print(f"ok: {argv[0]}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
