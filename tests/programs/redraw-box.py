#!/usr/bin/env python3
"""An input box that re-draws itself after every key it reads, as Ink-based
agent CLIs do, for send_prompt's tests.

    redraw-box.py LOG MODE

Raw mode, bracketed paste on. The box shows the message being edited, one
row per line (the last six lines, each cut to its last 50 characters), with
the cursor after its last character; every key read, a dropped Enter
included, erases the box and draws it again in place. What Enter does is
MODE:

- `take`: it submits the message.
- `drop-first`: one within 300 ms of the end of a paste is dropped; a later
  one submits.
- `drop-late`: the first after each paste is dropped, however late; the
  next submits.
- `drop-all`: every one is dropped.
- `newline`: it adds a line to the message (a multi-line box); none submits.
- `newline-marked`: as `newline`, but the box shows it as `↵` after the
  text on the same row.
- `quiet-paste`: as `drop-first`, but a paste is drawn only at the next
  key (the screen does not show it before Enter).

A submitted message is printed above the box as `sent: <first 20 chars>`
and the box empties. LOG gets a line for everything received: `READY`,
`PASTE <bytes>`, `DROP`, `NEWLINE`, `SUBMIT <bytes> <sha256>` (the bytes of
the message as received: a paste carries newlines as carriage returns).
Ctrl-D exits.
"""
import hashlib
import os
import sys
import termios
import time
import tty

START, END = b"\x1b[200~", b"\x1b[201~"
LATE = 0.3
SHOWN = 6
WIDTH = 50


class Box:
    def __init__(self, out):
        self.out = out
        self.text = b""
        self.cursor_row = 0  # the cursor's row, counted from the box's top
        self.status = "ready"

    def draw(self, sent=None):
        out = self.out
        out.write(b"\r")
        if self.cursor_row:
            out.write(b"\x1b[%dA" % self.cursor_row)
        out.write(b"\x1b[J")
        if sent is not None:
            out.write(b"sent: " + sent[:20].replace(b"\r", b" ") + b"\r\n")
        lines = self.text.split(b"\r")[-SHOWN:]
        rows = [b"+" + b"-" * (WIDTH + 4) + b"+"]
        for i, line in enumerate(lines):
            shown = line[-WIDTH:]
            mark = b"> " if i == 0 else b"  "
            rows.append(b"| " + mark + shown + b" " * (WIDTH - len(shown)) + b" |")
        rows.append(b"+" + b"-" * (WIDTH + 4) + b"+")
        rows.append(b"status: " + self.status.encode())
        out.write(b"\r\n".join(rows))
        # The cursor goes after the last character of the message.
        last = len(lines)
        up = len(rows) - 1 - last
        out.write(b"\x1b[%dA\x1b[%dG" % (up, 5 + len(lines[-1][-WIDTH:])))
        self.cursor_row = last
        out.flush()


def main():
    log = open(sys.argv[1], "a")
    mode = sys.argv[2]

    def note(line):
        log.write(line + "\n")
        log.flush()

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    out = sys.stdout.buffer
    out.write(b"\x1b[?2004h")
    box = Box(out)
    box.draw()
    note("READY")
    pending, pasting, pasted_at, armed = b"", False, 0.0, False
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            pending += chunk
            while pending:
                sent = None
                if pasting:
                    end = pending.find(END)
                    if end < 0:
                        keep = len(END) - 1
                        box.text += pending[:-keep] if len(pending) > keep else b""
                        pending = pending[-keep:] if len(pending) > keep else pending
                        break
                    box.text += pending[:end]
                    pending = pending[end + len(END):]
                    pasting, pasted_at, armed = False, time.monotonic(), True
                    note("PASTE %d" % len(box.text))
                    if mode == "quiet-paste":
                        continue
                elif pending.startswith(START):
                    pasting, pending = True, pending[len(START):]
                    continue
                elif START.startswith(pending[: len(START)]) and len(pending) < len(START):
                    break
                else:
                    key, pending = pending[:1], pending[1:]
                    if key == b"\x04":
                        return
                    if key != b"\r":
                        box.text += key
                    elif mode == "newline":
                        box.text += b"\r"
                        note("NEWLINE")
                    elif mode == "newline-marked":
                        box.text += "\u21b5".encode()
                        note("NEWLINE")
                    elif (
                        mode == "drop-all"
                        or (
                            mode in ("drop-first", "quiet-paste")
                            and time.monotonic() - pasted_at < LATE
                        )
                        or (mode == "drop-late" and armed)
                    ):
                        armed = False
                        box.status = "enter ignored"
                        note("DROP")
                    else:
                        digest = hashlib.sha256(box.text).hexdigest()
                        note("SUBMIT %d %s" % (len(box.text), digest))
                        sent, box.text, box.status = box.text, b"", "sent"
                box.draw(sent)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        out.write(b"\x1b[?2004l")
        out.flush()


if __name__ == "__main__":
    main()
