"""The tables of notebooks, written from the notebooks' manifests (helpers/series/NN_name.toml).

    python -m tools.series            print README's table of notebooks
    python -m tools.series --write    write README's table and docs/notebooks.md's (between their markers)
    python -m tools.series --check    write nothing; exit 1 if either is out of date (tests/tools/test_manifest.py)

README's table: for each notebook its number, its title (a link to the notebook), the post's section it mirrors,
what you do and see ([readme] summary) and the learner-time estimate tools/learner_time.py computes from the
notebook (``python -m tools.learner_time --write`` calls this too). docs/notebooks.md: the same notebooks in full
([readme] in_detail), with their explorers and exercises.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DETAIL = ROOT / "docs" / "notebooks.md"
README_MARKS = ("<!-- notebooks: start (python -m tools.series --write) -->", "<!-- notebooks: end -->")
DETAIL_MARKS = README_MARKS


def _cell(text: str) -> str:
    """Text for one cell of a markdown table (a ``|`` would end the cell)."""
    return " ".join(text.replace("|", "\\|").split())


def readme_table() -> str:
    from helpers import series
    from tools import learner_time

    rows = ["| # | notebook | the post's section | what you do and see | time |", "|---|---|---|---|---|"]
    for nb in series.notebooks():
        est = learner_time.estimate(ROOT / "notebooks" / nb.file)
        rows.append(f"| {nb.number} | [{_cell(nb.title)}](notebooks/{nb.file}) | {_cell(nb.post_section)} | "
                    f"{_cell(nb.summary)} | {learner_time.readme_cell(est)} |")
    return "\n".join(rows)


def detail_table() -> str:
    from helpers import series

    rows = ["| # | notebook | the post's section | what you do and see, explore and write |", "|---|---|---|---|"]
    for nb in series.notebooks():
        rows.append(f"| {nb.number} | [{_cell(nb.title)}](../notebooks/{nb.file}) | {_cell(nb.post_section)} | "
                    f"{_cell(nb.in_detail)} |")
    return "\n".join(rows)


def between(text: str, marks: tuple[str, str], content: str, where: str) -> str:
    """``text`` with what lies between the two marker lines replaced by ``content``."""
    if text.count(marks[0]) != 1 or text.count(marks[1]) != 1:
        raise SystemExit(f"{where}: needs the lines {marks[0]} and {marks[1]}, once each")
    head, rest = text.split(marks[0])
    _, tail = rest.split(marks[1])
    return f"{head}{marks[0]}\n{content}\n{marks[1]}{tail}"


def wanted() -> dict[Path, str]:
    """Every file this tool writes -> the text it should hold."""
    return {README: between(README.read_text(encoding="utf-8"), README_MARKS, readme_table(), "README.md"),
            DETAIL: between(DETAIL.read_text(encoding="utf-8"), DETAIL_MARKS, detail_table(), "docs/notebooks.md")}


def write() -> list[Path]:
    changed = []
    for path, text in wanted().items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv: list[str]) -> int:
    if argv == ["--write"]:
        for path in write():
            print(f"wrote {path.relative_to(ROOT)}")
        return 0
    if argv == ["--check"]:
        stale = [p for p, text in wanted().items() if p.read_text(encoding="utf-8") != text]
        for path in stale:
            print(f"out of date: {path.relative_to(ROOT)} (python -m tools.series --write)")
        return 1 if stale else 0
    if argv:
        print(__doc__)
        return 2
    print(readme_table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
