"""Runs `dflab` command lines for the CLI fuzz test, many in one interpreter.

A fresh `python -m dflab` per case costs about half a second of start-up, which would be most of
the fuzz test's time; this process imports dflab once and calls the CLI's entry point
(`dflab.cli.main`, what the `dflab` script calls) for each case, with its stdout and stderr
captured. It stays a process of its own, so that a case that hangs or aborts (a Rust panic
that aborts, an allocation failure) is caught by the test, which then starts a new one.

Protocol, one JSON object per line: in `{"argv": [...], "cwd": "..."}`; out `{"rc": int | null,
"stdout": str, "stderr": str}`, where rc is null and stderr holds the traceback when the CLI
raised instead of returning. Whatever native code writes to the real stdout or stderr goes to
this process's stderr, which the test reads as a log (a Rust panic message lands there).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback


def _serve(channel: io.TextIOBase) -> None:
    from dflab.cli import main as cli_main

    for line in sys.stdin:
        case = json.loads(line)
        os.chdir(case["cwd"])
        stdout, stderr = io.StringIO(), io.StringIO()
        rc: int | None
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                rc = cli_main(case["argv"])
            except BaseException:  # a PanicException or SystemExit is a finding, not our end
                traceback.print_exc()
                rc = None
        reply = {"rc": rc, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}
        channel.write(json.dumps(reply) + "\n")
        channel.flush()


def main() -> None:
    # The protocol gets a private copy of stdout; fd 1 itself then points at stderr, so native
    # output cannot interleave with the replies.
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    _serve(channel)


if __name__ == "__main__":
    main()
