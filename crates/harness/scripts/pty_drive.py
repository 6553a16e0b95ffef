"""Runs a terminal program under a pseudo-terminal and types into it.

    python3 pty_drive.py STEPS PROGRAM [ARG...]

STEPS is a JSON list of [kind, argument] pairs, done in order:
["expect", REGEX] waits (at most 180 s) until the program has printed text
matching REGEX since the last match; ["send", TEXT] types TEXT. Everything
the program prints is copied to standard output. Exits with the program's
exit code, or 3 when an expected text never came (the program is killed),
4 when the program ended first.
"""

import json
import os
import pty
import re
import select
import signal
import sys
import time


def main():
    steps = json.loads(sys.argv[1])
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[2], sys.argv[2:])
    seen = b""

    def read_some(wait):
        nonlocal seen
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            return True
        try:
            data = os.read(fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        seen += data
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return True

    for kind, arg in steps:
        if kind == "expect":
            pattern = re.compile(arg.encode())
            deadline = time.time() + 180
            while not pattern.search(seen):
                if time.time() > deadline:
                    sys.stderr.write(f"pty_drive: timed out waiting for {arg!r}\n")
                    os.kill(pid, signal.SIGKILL)
                    sys.exit(3)
                if not read_some(1.0):
                    sys.stderr.write(f"pty_drive: the program ended before {arg!r}\n")
                    sys.exit(4)
            seen = b""
        elif kind == "send":
            # Interactive prompts draw themselves before they read.
            time.sleep(0.5)
            os.write(fd, arg.encode())
    deadline = time.time() + 60
    while time.time() < deadline and read_some(1.0):
        pass
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))


main()
