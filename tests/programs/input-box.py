#!/usr/bin/env python3
"""A stand-in for an agent CLI's input box, for send_prompt's tests.

Raw mode, bracketed paste on. A paste (ESC [200~ ... ESC [201~) becomes the
message being edited, shown as `[draft: N bytes]`; a typed key adds to it.
Enter submits the message, printing `SUBMITTED <bytes> <sha256>` and
clearing it, except an Enter that comes under 100 ms after a paste ended:
that one is ignored, as real input boxes still busy with a paste do. A
newline inside a paste stays in the message. Ctrl-D exits.
"""
import hashlib
import os
import sys
import termios
import time
import tty

START, END = b"\x1b[200~", b"\x1b[201~"
IGNORE_AFTER_PASTE = 0.1


def main():
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    out = sys.stdout.buffer
    out.write(b"\x1b[?2004h> ready\r\n")
    out.flush()
    draft, pending, pasting, pasted_at = b"", b"", False, 0.0
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            pending += chunk
            while pending:
                if pasting:
                    end = pending.find(END)
                    if end < 0:
                        keep = len(END) - 1
                        draft += pending[:-keep] if len(pending) > keep else b""
                        pending = pending[-keep:] if len(pending) > keep else pending
                        break
                    draft += pending[:end]
                    pending = pending[end + len(END):]
                    pasting, pasted_at = False, time.monotonic()
                    out.write(b"[draft: %d bytes]\r\n" % len(draft))
                    out.flush()
                    continue
                if pending.startswith(START):
                    pasting, pending = True, pending[len(START):]
                    continue
                if START.startswith(pending[: len(START)]) and len(pending) < len(START):
                    break
                key, pending = pending[:1], pending[1:]
                if key == b"\x04":
                    return
                if key == b"\r":
                    if time.monotonic() - pasted_at < IGNORE_AFTER_PASTE:
                        continue
                    digest = hashlib.sha256(draft).hexdigest()
                    out.write(b"SUBMITTED %d %s\r\n" % (len(draft), digest.encode()))
                    out.flush()
                    draft = b""
                else:
                    draft += key
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        out.write(b"\x1b[?2004l")
        out.flush()


if __name__ == "__main__":
    main()
