"""How long a learner needs for each notebook: an estimate per cell and per exercise, written down.

    .venv/bin/python -m tools.learner_time            # the table, per notebook and in all
    .venv/bin/python -m tools.learner_time --write    # put the figures into each notebook's opening and README.md

--write also puts each notebook's run time, as the bench measured it (docs/speed.md), into its opening ("Running
every cell takes about N seconds", rounded up to 5 s), writes the learner copy of each notebook it changes, and
README's table of notebooks (tools/series.py).

The method (the rates are the assumptions; change them here and --write again):
- prose: every word of a markdown cell, formulas included (a LaTeX command counts as a word), at 100 words a
  minute — slow reading, because the text is technical and the reader checks it against the output beside it;
  folded answers and the exercises' own text count too (a learner reads them);
- code: every line of a code cell that is not blank or a comment, at 5 seconds a line (the Colab and import cells
  at the top are skipped: a learner runs them without reading);
- each "Predict, then check": 2 minutes to think before opening the answer;
- each explorer (a cell that shows a widget): 4 minutes to try it;
- each "Check yourself" question: 1.5 minutes;
- each exercise: the minutes its heading states (the writer's estimate for a learner who has read the notebook).

README's "Learner time" also says how long two readers new to the series took, timing themselves: more than this
estimate, because a first reader also re-reads and debugs.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
README = ROOT / "README.md"

WORDS_PER_MINUTE = 100
SECONDS_PER_CODE_LINE = 5
PREDICT_MINUTES = 2
EXPLORER_MINUTES = 4
CHECK_YOURSELF_MINUTES = 1.5
SKIPPED_CODE_CELLS = 2  # the Colab cell and the imports

EXERCISE = re.compile(r"^### Exercise \S+ .*\n(★+☆*) · about (\d+) min", re.M)
EXPLORER = re.compile(r"^\s*(\w+ = )?\w*(Explorer|Playground|VsBigram)\(|^explorer\s*$", re.M)
TOTALS = re.compile(r"\*\*[\d.]+ hours for [^*]*\*\*")  # README: "**9.1 hours for 01–05, ... and 2.3 for 11**"
OPENING = re.compile(r"\*\*About how long\*\*:? .*?(?=\n\n|\Z)", re.S)


def words(text: str) -> int:
    return len(re.findall(r"\\[A-Za-z]+|[\w'’]+", text))


def estimate(path: Path) -> dict:
    nb = nbformat.read(path, as_version=4)
    prose = sum(words(c.source) for c in nb.cells if c.cell_type == "markdown")
    code_cells = [c for c in nb.cells if c.cell_type == "code"][SKIPPED_CODE_CELLS:]
    solutions = [c for c in code_cells if "### BEGIN SOLUTION" in c.source]
    lines = sum(1 for c in code_cells if c not in solutions for ln in c.source.splitlines()
                if ln.strip() and not ln.strip().startswith("#"))
    predictions = sum(c.source.count("**Predict, then check.**") for c in nb.cells if c.cell_type == "markdown")
    explorers = sum(1 for c in code_cells if EXPLORER.search(c.source))
    check_yourself = 0
    for c in nb.cells:
        if c.cell_type == "markdown" and "## Check yourself" in c.source:
            part = c.source.split("## Check yourself", 1)[1].split("<details>", 1)[0]
            check_yourself += len(re.findall(r"^\d+\. ", part, re.M))
    exercises = [int(m) for c in nb.cells if c.cell_type == "markdown" for _, m in EXERCISE.findall(c.source)]
    reading = (prose / WORDS_PER_MINUTE + lines * SECONDS_PER_CODE_LINE / 60 + predictions * PREDICT_MINUTES
               + explorers * EXPLORER_MINUTES + check_yourself * CHECK_YOURSELF_MINUTES)
    return {"notebook": path.stem, "words": prose, "code_lines": lines, "predictions": predictions,
            "explorers": explorers, "check_yourself": check_yourself, "exercises": exercises,
            "reading": round5(reading), "exercise_minutes": sum(exercises)}


def round5(minutes: float) -> int:
    return max(5, int(5 * round(minutes / 5)))


def opening(est: dict) -> str:
    n = len(est["exercises"])
    count = {1: "the exercise", 2: "the two exercises", 3: "the three exercises"}.get(n, f"the {n} exercises")
    return (f"**About how long** (an estimate, README \"Learner time\"): {est['reading']} minutes to read, run and "
            f"explore, and about {est['exercise_minutes']} more for {count}.")


def readme_cell(est: dict) -> str:
    return f"{est['reading']} min + {est['exercise_minutes']} min exercises"


def groups() -> list[tuple[str, str]]:
    """(first, last) notebook number of each group README's learner time adds up, from the manifests'
    [learner_time] group: each group a run of consecutive notebooks (1 for 01-05, ...)."""
    from helpers import series

    runs: list[tuple[int, list[str]]] = []
    for nb in series.notebooks():
        if runs and runs[-1][0] == nb.learner_time_group:
            runs[-1][1].append(nb.number)
        elif any(g == nb.learner_time_group for g, _ in runs):
            raise ValueError(f"notebook {nb.number}'s [learner_time] group {nb.learner_time_group} comes back after "
                             "another group: a group is a run of consecutive notebooks")
        else:
            runs.append((nb.learner_time_group, [nb.number]))
    return [(numbers[0], numbers[-1]) for _, numbers in runs]


def label(lo: str, hi: str) -> str:
    return lo if lo == hi else f"{lo}–{hi}"


def hours(estimates: list[dict]) -> list[tuple[str, str, float]]:
    """(first, last, hours) for each group of notebooks (01-05, 06-10, 11): reading and exercises together."""
    return [(lo, hi, sum(e["reading"] + e["exercise_minutes"] for e in estimates if lo <= e["notebook"][:2] <= hi) / 60)
            for lo, hi in groups()]


def totals(estimates: list[dict]) -> str:
    """README's sentence of totals: "**9.1 hours for 01–05, 11.2 for 06–10 and 2.3 for 11**"."""
    parts = [f"{h:.1f}{' hours' if i == 0 else ''} for {label(lo, hi)}"
             for i, (lo, hi, h) in enumerate(hours(estimates))]
    return "**" + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]) + "**"


SPEED = ROOT / "docs" / "speed.md"
RUN_TIME = re.compile(r"Running every cell takes about (\d+) seconds")


def measured_run_times() -> dict[str, float]:
    """Each notebook's run time on a fresh kernel, in seconds, from the bench's table in docs/speed.md."""
    rows = re.findall(r"^\| (\d\d_\w+) \| ([\d.]+) s \|", SPEED.read_text(encoding="utf-8"), re.M)
    return {name: float(seconds) for name, seconds in rows}


def run_time_said(seconds: float) -> int:
    """The run time an opening states: the measured time rounded up to the next 5 seconds."""
    return 5 * math.ceil(seconds / 5)


def write(estimates: list[dict]) -> list[str]:
    """Each notebook's opening: the estimate, and the run time the bench measured (docs/speed.md); README's totals
    and its table of notebooks (tools/series.py)."""
    from tools import notebooks, series

    changed = []
    measured = measured_run_times()
    for est in estimates:
        path = NOTEBOOKS / f"{est['notebook']}.ipynb"
        nb = nbformat.read(path, as_version=4)
        cell = nb.cells[0]
        match = OPENING.search(cell.source)
        if match is None:
            sys.exit(f"{path.name}: its first cell has no '**About how long**' paragraph")
        old = match.group(0)
        rest = re.search(r"exercises?[.;,]\s*(.*)$", old, re.S)  # what follows the times: the run time
        tail = rest.group(1).strip() if rest else ""
        tail = re.sub(r"^(the notebook|running|everything)", lambda m: m.group(0)[0].upper() + m.group(0)[1:], tail)
        if est["notebook"] in measured:
            tail = RUN_TIME.sub(f"Running every cell takes about {run_time_said(measured[est['notebook']])} seconds",
                                tail, count=1)
        new = opening(est) + (" " + tail if tail else "")
        if new != old:
            cell.source = cell.source.replace(old, new)
            notebooks.write(notebooks.cleaned(nb), path)
            notebooks.write_learner_copy(nb, path)  # the learner copy's opening says the same
            changed.append(path.name)
    before = README.read_text(encoding="utf-8")
    text, n = TOTALS.subn(totals(estimates), before)
    if n != 1:
        sys.exit("README.md: no '**N hours for 01–05, ...**' in its Learner time section")
    if text != before:
        README.write_text(text, encoding="utf-8")
        changed.append("README.md")
    changed += [str(p.relative_to(ROOT)) for p in series.write()]
    return changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="update the notebooks' openings and README.md")
    args = parser.parse_args()
    estimates = [estimate(p) for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))]
    print(f"{'notebook':26s} {'words':>6s} {'code':>5s} {'pred':>5s} {'expl':>5s} {'check':>5s}   read   exercises")
    for e in estimates:
        print(f"{e['notebook']:26s} {e['words']:6d} {e['code_lines']:5d} {e['predictions']:5d} {e['explorers']:5d} "
              f"{e['check_yourself']:5d}   {e['reading']:4d}   {e['exercise_minutes']:4d} ({len(e['exercises'])})")
    for lo, hi, total in hours(estimates):
        print(f"{label(lo, hi)}: {total * 60:.0f} minutes ({total:.1f} hours)")
    if args.write:
        print("updated:", ", ".join(write(estimates)) or "nothing")


if __name__ == "__main__":
    main()
