"""Every notebook, as a learner sees it in JupyterLab in a real browser (issue 5).

For each notebooks/*.ipynb (and a fixture notebook that has one control of each kind): open it,
wait until the kernel is connected and idle, Run All, scroll through every cell, and check that
every widget output renders as a widget (no `IntSlider(value=...` / `VBox(children=...` /
"Loading widget..." text in any output area) and no cell raised. Then operate every control of
every explorer (helpers.widgets.base.Explorer: a `gt-caption` with `data-state` and an image):
slider by arrow key, dropdown by choosing another option, text box by typing, toggle by clicking;
the caption must name the new value and a new image must load. A screenshot per notebook goes to
artifacts/browser/. The negative control proves the detector fails when widgets do not render.
"""

from __future__ import annotations

import pytest
from conftest import ARTIFACTS, FIXTURE, series_notebooks

import jlab

KINDS = {"slider", "dropdown", "text", "toggle"}


def _served_path(nb) -> str:
    return f"{nb.parent.name}/{nb.name}"


def _explain(report: jlab.Report) -> str:
    return (f"{report.path}: {len(report.problems)} problem(s) seen in the browser "
            f"(screenshot in artifacts/browser/):\n  " + "\n  ".join(report.problems))


def test_fixture_explorer_all_control_kinds(lab, chromium):
    report = jlab.check_notebook(chromium, lab, _served_path(FIXTURE),
                                 screenshot=ARTIFACTS / "fixture_explorer.png")
    assert not report.problems, _explain(report)
    assert report.explorers == 1 and report.widget_outputs == 2
    operated = {op.split(" ->")[0] for op in report.operated}
    assert operated == KINDS, f"operated only {operated}: {report.operated}"


@pytest.mark.parametrize("nb", series_notebooks(), ids=lambda p: p.stem)
def test_notebook_in_browser(nb, lab, chromium):
    report = jlab.check_notebook(chromium, lab, _served_path(nb), screenshot=ARTIFACTS / f"{nb.stem}.png")
    assert not report.problems, _explain(report)
    assert report.explorers >= 1, (f"{nb.name}: no explorer found (CONTRIBUTING rule 4: at least one widget "
                                   "built on helpers.widgets.base.Explorer, with a gt-caption)")
    assert report.operated, f"{nb.name}: explorers found but no slider/dropdown/text/toggle to operate"


def test_negative_control_detects_text_fallback(lab_without_widgets, chromium):
    """With the ipywidgets front-end disabled, the same check must fail and say why."""
    report = jlab.check_notebook(chromium, lab_without_widgets, _served_path(FIXTURE),
                                 screenshot=ARTIFACTS / "negative_control.png")
    text = "\n".join(report.problems)
    assert "rendered as text, not as a widget" in text, text
    assert "VBox(children=" in text and "IntSlider(" in text, text
    assert report.explorers == 0
