#!/usr/bin/env python3
"""Derives protocol/reference-args.json from the reference's tool table.

Reads the "### 2.1 Tool table" of the libtmux-mcp anchor document (by
default ../shared/reference/libtmux-mcp.md) and writes, for every tool of
0.1.0a22, every argument with its default (null when the reference has
none). tests/it/tools_catalog.rs checks our input schemas against the result,
so the check rests on the reference's text, not on our own output.

    python3 scripts/reference-args.py [path/to/libtmux-mcp.md] > protocol/reference-args.json

Parsing rules (the table's own shorthand, defined above it in §2):
  - a parameter cell is a `;`-separated list of segments; a segment's first
    backticked span is `names[: type][ = default]`, or a group name (`PT`,
    `WT`, `ST`, `sock`) or a bare argument name (default null);
  - `= **value**` after the span is a default written outside it
    (run_command's suppress_history);
  - parentheses hold comments, except "(required)";
  - rows whose tier says "a22: removed" are gone; `call_read_tools_batch`
    has the parameters of row 1 (§D: "Input schema identical to a20
    `call_readonly_tools_batch`").
"""

import json
import re
import sys

GROUPS = {
    "sock": ["socket_name"],
    "PT": ["pane_id", "session_name", "session_id", "window_id"],
    "WT": ["window_id", "window_index", "session_name", "session_id"],
    "ST": ["session_name", "session_id"],
}


def table_rows(text):
    """The data rows of §2.1 as lists of cells."""
    section = text.split("### 2.1 Tool table", 1)[1].split("\n### ", 1)[0]
    for line in section.splitlines():
        if not re.match(r"^\| \d+ \|", line):
            continue
        # Cells are split on `|` not escaped as `\|`.
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        yield [c.replace("\\|", "|") for c in cells]


def segments(cell):
    """Splits a parameter cell on `;` outside backticks and parentheses."""
    out, depth, ticks, current = [], 0, False, ""
    for ch in cell:
        if ch == "`":
            ticks = not ticks
        elif not ticks and ch == "(":
            depth += 1
        elif not ticks and ch == ")":
            depth -= 1
        if ch == ";" and depth == 0 and not ticks:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return out


def parse_segment(segment):
    """[(name, default)] for one segment."""
    outside = re.sub(r"\([^)]*\)", "", segment)
    span = re.search(r"`([^`]*)`", outside)
    if not span:
        return []
    spec = span.group(1)
    default = None
    names_part = spec.split(":", 1)[0]
    if "=" in spec and ":" in spec:
        default = json.loads(spec.split("=", 1)[1].strip())
    loose = re.search(r"=\s*\*\*([^*]+)\*\*", outside[span.end():])
    if loose:
        default = json.loads(loose.group(1).strip())
    names = [n.strip() for n in names_part.split(",") if n.strip()]
    if len(names) == 1 and names[0] in GROUPS:
        names = GROUPS[names[0]]
    return [(name, default) for name in names]


def tool_args(cell):
    args = {}
    for segment in segments(cell):
        for name, default in parse_segment(segment):
            args.setdefault(name, default)
    return args


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "../shared/reference/libtmux-mcp.md"
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tools, first_batch = {}, None
    for cells in table_rows(text):
        name, tier, params = cells[1].strip("`"), cells[3], cells[5]
        if first_batch is None:
            first_batch = tool_args(params)
        if "a22: removed" in tier:
            continue
        tools[name] = tool_args(params)
    tools["call_read_tools_batch"] = first_batch
    json.dump(
        {
            "source": "libtmux-mcp 0.1.0a22, anchor document §2.1 (scripts/reference-args.py)",
            "tools": dict(sorted(tools.items())),
        },
        sys.stdout,
        indent=2,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
