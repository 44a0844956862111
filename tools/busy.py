"""Run a command with CPU-bound processes beside it, as on a busy machine (a class's shared server, a laptop
compiling something), and report the load it ran under.

    python -m tools.busy --per-core 2 -- python -m pytest tests/unit/checks/test_checks_base.py
    GT_CHECK_TIMES=/tmp/times.tsv python -m tools.busy -- python -m pytest tests/unit/checks/test_attention_checks.py
    python -m tools.busy --summary /tmp/times.tsv          # the slowest calls of learners' functions

The busy processes spin in plain Python (no torch threads), one per ``--per-core`` x the machine's cores, and are
ended when the command ends, whatever its exit. With GT_CHECK_TIMES set, every call of a learner's function by an
exercise check appends "what<TAB>seconds" to that file (helpers/checks/base.py): ``--summary`` prints the slowest.
The measurement behind the checks' time limit is recorded in docs/check_limit.md.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time


def _spin() -> None:  # a CPU-bound process that never sleeps
    x = 0
    while True:
        x = (x * 1103515245 + 12345) % 2147483648


def run_busy(command: list[str], per_core: int) -> int:
    n = per_core * (os.cpu_count() or 1)
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for p in spinners:
        p.start()
    start, loads = time.time(), []
    try:
        proc = subprocess.Popen(command)
        while proc.poll() is None:
            time.sleep(5)
            loads.append(os.getloadavg()[0])
        code = proc.returncode
    finally:
        for p in spinners:
            p.terminate()
    mean = sum(loads) / len(loads) if loads else float("nan")
    print(f"busy.py: {' '.join(command)}: exit {code}, {time.time() - start:.0f} s with {n} busy processes on "
          f"{os.cpu_count()} cores; 1-minute load average {min(loads, default=0):.1f}-{max(loads, default=0):.1f} "
          f"(mean {mean:.1f})")
    return code


def summary(path: str, top: int = 12) -> None:
    rows = []
    with open(path) as f:
        for line in f:
            what, _, seconds = line.rstrip("\n").rpartition("\t")
            rows.append((float(seconds), what))
    rows.sort(reverse=True)
    print(f"{len(rows)} calls of learners' functions; the slowest {min(top, len(rows))}:")
    for seconds, what in rows[:top]:
        print(f"  {seconds:7.2f} s  {what}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-core", type=int, default=2, help="busy processes per core (default 2)")
    ap.add_argument("--summary", metavar="TIMES", help="print the slowest calls recorded in this GT_CHECK_TIMES file")
    ap.add_argument("command", nargs="*")
    args = ap.parse_args()
    if args.summary:
        summary(args.summary)
    if args.command:
        sys.exit(run_busy(args.command, args.per_core))


if __name__ == "__main__":
    main()
