#!/usr/bin/env python3
"""Checks the shape of src/ from its `use` lines (test modules left out).

- No import circle between files: a file's `use` of a name another file
  defines (re-exports followed to the defining file) is an edge, and so is
  a path written out in code (`super::child::reap(…)`, `crate::process::probe`).
  The edges of src/drive/server.rs (the typed state of a server, which
  only names its fields' types) are left out.
- The floors: src/tmux/ and src/panes/ import neither src/tools/ nor
  src/drive/; src/drive/ never imports src/tools/.
- src/tools/ has three floors, imports pointing down: a tool group
  (src/tools/cmd/<group>.rs or <group>/) never imports another group, and
  src/tools/shared/ never imports src/tools/cmd/.
- Text reaches a pane through src/drive/input.rs only: no other file
  builds `paste-buffer`, nor `send-keys` but for copy mode (`-X`) or a
  reset (`-R`).
- No type name is defined in two files.
- tmux's version is read in src/tmux/ only: no `#{version}` in src/tools/
  (but get_server_info's, which reports it verbatim and parses nothing).

- No function is longer than 80 lines, signature to closing brace, tests
  left out (LONG may list an exception with its length, which may only
  shrink; it is empty).

Prints what it found; exits 1 on any breach. Usage: scripts/imports.py [SRC]
"""

import re
import sys
from pathlib import Path

SRC = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent / "src")


def module_path(file: Path) -> tuple:
    parts = list(file.relative_to(SRC).with_suffix("").parts)
    if parts[-1] in ("lib", "mod"):
        parts.pop()
    return tuple(parts)


def without_tests(text: str) -> str:
    """The text with every `#[cfg(test)] mod … { … }` block removed (braces
    counted outside strings, chars and comments)."""
    out, i = [], 0
    pattern = re.compile(r"#\[cfg\(test\)\]\s*(pub(\(\w+\))?\s+)?mod\s+\w+\s*\{")
    while True:
        m = pattern.search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i : m.start()])
        i = closing_brace(text, m.end() - 1) + 1


def closing_brace(text: str, open_at: int) -> int:
    """The index of the `}` that closes the `{` at `open_at` (braces counted
    outside strings, chars and comments; the text's end if none does)."""
    depth, j = 0, open_at
    while j < len(text):
        if text.startswith("//", j):
            j = text.find("\n", j)
            j = len(text) if j < 0 else j
            continue
        c = text[j]
        if c == '"':
            j += 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[j : j + 4]):
            j = text.index("'", j + 1)
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return j


USE = re.compile(r"^\s*(pub(\([\w:]+\))?\s+)?use\s+([^;]+);", re.M)
# A path written out in code: `super::child::reap`, `crate::process::probe`.
PATH = re.compile(r"(?<![\w:])((?:crate|super|self)(?:::(?:super|[A-Za-z_]\w*))+)")
COMMENT = re.compile(r"//[^\n]*")

# The bound on a function's lines, and exceptions to it (file, function:
# lines), each of which may only get shorter. None left.
MAX_FN_LINES = 80
LONG: dict = {}
FN = re.compile(r"^(\s*)(?:pub(?:\([\w:]+\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)", re.M)


def expand(tree: str) -> list:
    """`a::{b, c::{d, self}}` -> [[a, b], [a, c, d], [a, c]]."""
    tree = re.sub(r"\s+", "", tree)
    tree = re.sub(r"\bas\w+", "", tree.replace("as", " as")).replace(" ", "")

    def walk(prefix, text):
        paths, depth, start = [], 0, 0
        parts = []
        for k, c in enumerate(text):
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif c == "," and depth == 0:
                parts.append(text[start:k])
                start = k + 1
        parts.append(text[start:])
        for part in filter(None, parts):
            if "{" in part:
                head, inner = part.split("{", 1)
                head = [s for s in head.split("::") if s]
                paths += walk(prefix + head, inner[: inner.rindex("}")])
            else:
                segs = [s for s in part.split("::") if s]
                if segs == ["self"]:
                    paths.append(prefix)
                elif segs != ["*"]:
                    paths.append(prefix + [s for s in segs if s != "*"])
                else:
                    paths.append(prefix)
        return paths

    return walk([], tree)


def main() -> int:
    files = {module_path(f): f for f in SRC.rglob("*.rs") if f.name != "main.rs"}
    uses = {}  # module -> [(absolute path, is_pub)]
    for mod, file in files.items():
        text = without_tests(file.read_text())
        found = []
        code = COMMENT.sub("", USE.sub("", text))
        written = [(p.group(1), False) for p in PATH.finditer(code)]
        for tree, public in [(m.group(3), bool(m.group(1))) for m in USE.finditer(text)] + written:
            for path in expand(tree):
                if not path:
                    continue
                if path[0] == "crate":
                    absolute = list(path[1:])
                elif path[0] in ("super", "self"):
                    base = list(mod)
                    while path and path[0] in ("super", "self"):
                        if path[0] == "super":
                            base.pop()
                        path = path[1:]
                    absolute = base + list(path)
                else:
                    continue
                found.append((tuple(absolute), public))
        uses[mod] = found

    def resolve(path: tuple, seen=0):
        """The module (a key of `files`) that defines the item `path` names."""
        for cut in range(len(path), -1, -1):
            if path[:cut] in files:
                mod, rest = path[:cut], path[cut:]
                break
        else:
            return None
        if rest and seen < 8:
            for target, public in uses.get(mod, []):
                if public and target[-1:] == rest[:1]:
                    return resolve(target + rest[1:], seen + 1)
        return mod

    edges = {mod: set() for mod in files}
    for mod, found in uses.items():
        for path, _ in found:
            target = resolve(path)
            if target is not None and target != mod and target != mod[: len(target)]:
                edges[mod].add(target)

    breaches = []
    # drive/server.rs names the state each tmux server keeps (a Watch, a
    # command's record), which the floor's files define and whose code
    # takes the Target that carries that state: a circle by type only.
    # It only makes them, so its edges stay out of the circle check.
    typed_state = {("drive", "server")}
    acyclic = {mod: set() if mod in typed_state else targets for mod, targets in edges.items()}
    for cycle in strongly_connected(acyclic):
        names = sorted(str(files[m].relative_to(SRC)) for m in cycle)
        breaches.append("import circle: " + " -> ".join(names))
    for mod, targets in sorted(edges.items()):
        for target in sorted(targets):
            if mod[:2] == ("tools", "cmd") and target[:2] == ("tools", "cmd"):
                if len(mod) > 2 and len(target) > 2 and mod[2] != target[2]:
                    breaches.append(f"group {mod[2]} imports group {target[2]}")
            if mod[:2] == ("tools", "shared") and target[:2] == ("tools", "cmd"):
                breaches.append(f"{'::'.join(mod)} (shared) imports {'::'.join(target)}")
            below = {"tmux": ("drive", "tools"), "panes": ("drive", "tools"), "drive": ("tools",)}
            if mod[:1] and target[:1] and target[0] in below.get(mod[0], ()):
                breaches.append(f"{'::'.join(mod)} imports {'::'.join(target)} (a floor above it)")
    verbatim = {SRC / "tools" / "cmd" / "server.rs"}
    for file in (SRC / "tools").rglob("*.rs"):
        if file not in verbatim and "#{version}" in without_tests(file.read_text()):
            breaches.append(f"{file.relative_to(SRC)} asks tmux for #{{version}} itself")
    breaches += input_outside_drive()
    breaches += names_defined_twice()
    breaches += long_functions()
    for breach in breaches:
        print(breach)
    edge_count = sum(map(len, edges.values()))
    print(f"imports: {len(files)} files, {edge_count} edges, {len(breaches)} breaches")
    return 1 if breaches else 0


def function_lengths(text: str):
    """(name, lines) of every function with a body in `text`."""
    for m in FN.finditer(text):
        open_at = body_brace(text, m.end())
        if open_at is None:
            continue
        j = closing_brace(text, open_at)
        yield m.group(2), text.count("\n", m.start(), j) + 1


def body_brace(text: str, at: int):
    """Where the body of the function whose name ends at `at` opens: the
    first `{` outside the parameters' parentheses (a parameter can be a
    pattern with braces, `Call { app, .. }: Call`); `None` for a
    declaration without a body (`;` first)."""
    depth = 0
    for j in range(at, len(text)):
        c = text[j]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and c == "{":
            return j
        elif depth == 0 and c == ";":
            return None
    return None


def long_functions() -> list:
    """A breach for each function over the bound, or over its LONG entry."""
    out = []
    for file in sorted(SRC.rglob("*.rs")):
        name = str(file.relative_to(SRC))
        for fn, lines in function_lengths(without_tests(file.read_text())):
            allowed = LONG.get((name, fn), MAX_FN_LINES)
            if lines > allowed:
                out.append(f"{name}: fn {fn} is {lines} lines (bound {allowed})")
    return out


def names_defined_twice() -> list:
    """A type name (struct, enum, trait, type alias; associated types in
    an impl aside) defined in two files: a reader cannot tell them apart."""
    where = {}
    define = re.compile(r"^(?:pub(?:\([\w:]+\))?\s+)?(?:struct|enum|trait|type)\s+(\w+)", re.M)
    for file in sorted(SRC.rglob("*.rs")):
        for m in define.finditer(without_tests(file.read_text())):
            where.setdefault(m.group(1), []).append(str(file.relative_to(SRC)))
    return [f"type {name} is defined in {', '.join(files)}" for name, files in sorted(where.items()) if len(files) > 1]


def input_outside_drive() -> list:
    """Text reaches a pane through drive/input.rs only: `send-keys` is
    built elsewhere only for copy mode's commands (`-X`) or a reset
    (`-R`), `paste-buffer` never."""
    found = []
    builds = re.compile(r'Command::new\("(send-keys|paste-buffer)"\)((?:\s*\.[a-z_]+\([^;]*?\))*)')
    for file in SRC.rglob("*.rs"):
        if file == SRC / "drive" / "input.rs":
            continue
        text = without_tests(file.read_text())
        for m in builds.finditer(text):
            flags = m.group(2)
            if m.group(1) == "send-keys" and ('.flag("-X")' in flags or '.flag("-R")' in flags):
                continue
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{file.relative_to(SRC)}:{line} builds {m.group(1)}: input goes through drive::input::send")
    return found


def strongly_connected(edges: dict) -> list:
    """Tarjan's algorithm; returns the components of more than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(component)

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    sys.exit(main())
