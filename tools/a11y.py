"""The accessibility audit of the series: every notebook run in JupyterLab (headless Chromium), then axe-core on its
outputs (widgets, pictures, captions, tables, markdown), counted by impact; JupyterLab's own interface reported apart.

    bash run.sh a11y [NN ...]      # every notebook, or those named by number
    bash run.sh a11y --write       # also put the table in docs/accessibility.md (between its a11y markers)

Prints a table per notebook and writes artifacts/a11y/report.md and report.json. The browser test
(tests/browser/test_widgets_in_browser.py) requires no critical or serious violation in any notebook's outputs."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from tools import jlab

ROOT = Path(__file__).resolve().parent.parent


def table(rows: list[dict]) -> str:
    head = ("| notebook | outputs: critical | serious | moderate | minor | JupyterLab's own interface (not counted) |\n"
            "|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        ours, lab = r["ours"]["counts"], r["jupyterlab"]["counts"]
        theirs = ", ".join(f"{lab[k]} {k}" for k in jlab.IMPACTS if lab[k]) or "none"
        lines.append(f"| {r['notebook']} | {ours['critical']} | {ours['serious']} | {ours['moderate']} | "
                     f"{ours['minor']} | {theirs} |")
    return "\n".join(lines)


PAGE = ROOT / "docs" / "accessibility.md"
MARKS = ("<!-- a11y: start (bash run.sh a11y --write) -->\n", "<!-- a11y: end -->")


def write_page(text: str, axe: str, day: str | None = None) -> None:
    """Replace the table between docs/accessibility.md's a11y markers, with the day and axe-core's version (only
    after a run of every notebook)."""
    import datetime

    day = day or datetime.date.today().isoformat()
    s = PAGE.read_text(encoding="utf-8")
    i, j = s.index(MARKS[0]) + len(MARKS[0]), s.index(MARKS[1])
    PAGE.write_text(s[:i] + f"Run on {day} with axe-core {axe}, after Run All:\n\n" + text + "\n" + s[j:],
                    encoding="utf-8")
    print(f"{PAGE.relative_to(ROOT)}: table written")


def main(argv: list[str]) -> int:
    wanted = [a for a in argv if not a.startswith("-")]
    paths = [p for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
             if not wanted or any(p.name.startswith(w) for w in wanted)]
    problem = jlab.chromium_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory(prefix="gt-a11y-") as tmp:
        rels = jlab.stage_notebooks(Path(tmp), paths)
        with jlab.LabServer(Path(tmp)) as server, jlab.browser() as ctx:
            for path, rel in zip(paths, rels):
                report = jlab.check_notebook(ctx, server, rel, operate=False, audit=True, timeout=300)
                if not report.audit:
                    print(f"{path.name}: not audited: {report.problems[:2]}", file=sys.stderr)
                    continue
                rows.append({"notebook": path.stem, "axe": report.audit["axe"], **report.audit})
                ours = rows[-1]["ours"]
                print(f"{path.stem}: " + ", ".join(f"{ours['counts'][k]} {k}" for k in jlab.IMPACTS), flush=True)
                for v in ours["violations"]:
                    print(f"    {v['impact']}: {v['rule']} x{v['nodes']}: {v['help']} ({v['where'][0]})")
    out = ROOT / "artifacts" / "a11y"
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    text = table(rows)
    (out / "report.md").write_text(f"axe-core {rows[0]['axe'] if rows else '?'}, after Run All\n\n{text}\n",
                                   encoding="utf-8")
    print(f"\naxe-core {rows[0]['axe'] if rows else '?'}, after Run All\n\n{text}")
    if "--write" in argv and not wanted:
        write_page(text, rows[0]["axe"] if rows else "?")
    return 1 if any(r["ours"]["counts"]["critical"] or r["ours"]["counts"]["serious"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
