"""Every notebook, as a learner sees it in JupyterLab in a real browser.

For each notebooks/*.ipynb (and a fixture notebook that has one control of each kind): open it,
wait until the kernel is connected and idle, Run All, scroll through every cell, and check that
every widget output renders as a widget (no `IntSlider(value=...` / `VBox(children=...` /
"Loading widget..." text in any output area) and no cell raised. Then operate every control of
every explorer (helpers.widgets.base.Explorer: a `gt-caption` with `data-state`, and a picture whose
`gt-view` root carries the same data-state) from the KEYBOARD ONLY: focus it and press keys, as a
learner without a mouse would (slider: arrow keys; toggle-button group, toggle button, checkbox:
Space; text box: Control+A, a word, Enter; see jlab.NotebookPage.press_control). The caption must
name the new value, the picture must show the caption's state, and it must change. A dropdown is a
failure: JupyterLab's command-mode arrow keys take the keys from a focused <select>.

Fast input: typing a prompt with no delay between keys, or holding an arrow key, must end
with the last value drawn: the caption names the box's text / the slider's readout and the picture
shows the caption's state (no stale picture). Run on the fixture and on notebook 04's pattern explorer.

Accessibility: axe-core audits every notebook's outputs after Run All (no critical or serious
violation), and each operated control is checked for what a screen reader is told; before operating an explorer,
a keyboard walk Tabs through it and every stop must have a role and a name in Chromium's accessibility tree (a
slider's editable readout included), and every picture must be tied to its caption (aria-describedby) with no
unnamed image in it (an overlay drawn over a pattern included).

Negative controls: with the widget front-end switched off the render check fails and says why; the
stale check fails on a deliberately wrong expected value and on a doctored caption / picture; the audit finds an
unnamed slider handle and readout, an image without alt, an unnamed overlay and a picture cut from its caption
planted in a page.
A screenshot per notebook goes to artifacts/browser/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ARTIFACTS, FIXTURE, ROOT, series_notebooks

from tools import jlab

# every notebook in JupyterLab (and one in Notebook 7), in Chromium; the browser group
# runs on one worker (conftest.py's servers and Chromium start once)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]

KINDS = {"slider", "choice", "text", "toggle", "checkbox"}
# Corpus words only, longer than any default text, so the query slider gains room to move.
FAST_PROMPT = "and god said unto moses , go in unto pharaoh and say unto him , let my people go"
HOLD_PRESSES = 12


def _served_path(nb) -> str:
    return f"{nb.parent.name}/{nb.name}"


def _opened(chromium, lab, nb: Path) -> jlab.NotebookPage:
    """Notebook ``nb`` opened, run and its outputs checked (no problem allowed), ready to operate; the caller
    closes it."""
    nbp = jlab.NotebookPage(chromium, lab, _served_path(nb))
    try:
        nbp.open()
        nbp.run_all()
        nbp.check_outputs()
        assert not nbp.report.problems, _explain(nbp.report)
    except BaseException:
        nbp.close()
        raise
    return nbp


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
    # the keyboard walk went through every control, and the slider's readout, where a value can be typed, is one
    # of its stops with a name (jlab.ExplorerControls.keyboard_walk)
    stops = report.tab_stops[0]
    assert len(stops) >= 1 + 3 + 1 + 1 + 1 + 1, stops   # slider, its readout, three buttons, text, toggle, checkbox
    assert "textbox 'bars value'" in stops, stops


@pytest.mark.parametrize("nb", series_notebooks(), ids=lambda p: p.stem)
def test_notebook_in_browser(nb, lab, chromium):
    """...and, after Run All, axe-core audits the notebook's outputs: no critical or serious violation (JupyterLab's
    own interface is reported in artifacts/browser/NN.axe.json, not counted). Operating the controls also checks
    what a screen reader is told (jlab.ExplorerControls.accessibility_problems): every control named in the
    accessibility tree, a slider's value text its readout, a choice's pressed button the chosen one, the
    picture's words changing with the picture, no unnamed image in it and the picture described by its own caption
    (aria-describedby); and a keyboard walk of every explorer finds a role and a name at each Tab stop, an editable
    slider readout included (jlab.ExplorerControls.keyboard_walk). At 200 % zoom (a 640-pixel layout) the notebook
    must not scroll sideways, every control must stay in the window, and the first of each explorer must still work
    from the keyboard (screenshot artifacts/browser/NN_zoom200.png)."""
    report = jlab.check_notebook(chromium, lab, _served_path(nb), screenshot=ARTIFACTS / f"{nb.stem}.png",
                                 audit=True, zoom=ARTIFACTS / f"{nb.stem}_zoom200.png")
    assert not report.problems, _explain(report)
    (ARTIFACTS / f"{nb.stem}.axe.json").write_text(json.dumps(report.audit, indent=1), encoding="utf-8")
    assert report.audit and not jlab.serious(report.audit), "\n".join(jlab.serious(report.audit))
    assert report.explorers >= 1, (f"{nb.name}: no explorer found (CONTRIBUTING rule 4: at least one widget "
                                   "built on helpers.widgets.base.Explorer, with a gt-caption)")
    assert report.operated, f"{nb.name}: explorers found but no control to operate from the keyboard"


NOTEBOOK7_TARGET = sorted((ROOT / "notebooks").glob("04*.ipynb"))[0]


def test_notebook_in_jupyter_notebook_7(notebook7, chromium):
    """The same checks in Jupyter Notebook 7 (`jupyter notebook`, /notebooks/...): many classes use it.
    Notebook 04 runs to the end, its widgets render as widgets, and every control of its two explorers works
    from the keyboard (sliders with Shift+arrow: see jlab.NotebookPage.press_control), with the caption and the
    picture naming the keyed value, and no error in the page."""
    report = jlab.check_notebook(chromium, notebook7, _served_path(NOTEBOOK7_TARGET), ui="notebook",
                                 screenshot=ARTIFACTS / f"notebook7_{NOTEBOOK7_TARGET.stem}.png")
    # Notebook 7.6.5's own front-end throws this once when a notebook runs (seen with a one-cell `print(1)`
    # notebook too): not ours, and nothing on the page is affected.
    known = "JavaScript errors in the page: [\"Cannot read properties of undefined (reading 'schema')\"]"
    report.problems = [p for p in report.problems if p != known]
    assert not report.problems, _explain(report)
    assert report.explorers == 2, report.explorers
    operated = {op.split(" ->")[0] for op in report.operated}
    assert {"slider", "choice", "text", "checkbox"} <= operated, report.operated


def test_negative_control_detects_text_fallback(lab_without_widgets, chromium):
    """With the ipywidgets front-end disabled, the same check must fail and say why."""
    report = jlab.check_notebook(chromium, lab_without_widgets, _served_path(FIXTURE),
                                 screenshot=ARTIFACTS / "negative_control.png")
    text = "\n".join(report.problems)
    assert "rendered as text, not as a widget" in text, text
    assert "VBox(children=" in text and "IntSlider(" in text, text
    assert report.explorers == 0


FAST_TARGETS = [FIXTURE] + sorted((ROOT / "notebooks").glob("04*.ipynb"))


@pytest.mark.parametrize("nb", FAST_TARGETS, ids=lambda p: p.stem)
def test_fast_keys_never_leave_a_stale_picture(nb, lab, chromium):
    """(a) a prompt typed with no delay between keys, (b) an arrow key pressed HOLD_PRESSES times
    without waiting: once the kernel is idle and the explorer settled, the caption names the last
    value and the picture shows the caption's state. Then the negative controls: the same check on a
    wrong expected value and on a doctored caption / picture must fail."""
    nbp = _opened(chromium, lab, nb)
    try:
        explorers = nbp.js("() => gt.explorers()")
        ex = next((x for x in explorers if {"text", "slider"} <= {c["kind"] for c in x["controls"]}), None)
        assert ex, f"{nb.name}: no explorer with a text box and a slider: {explorers}"
        e = ex["id"]
        text = next(c for c in ex["controls"] if c["kind"] == "text")
        slider = next(c for c in ex["controls"] if c["kind"] == "slider")
        assert ex["hasView"], f"{nb.name}: the explorer's picture has no .gt-view root with a data-state"
        nbp.js("i => gt.scrollTo(i)", ex["cell"])
        # One slow change each tells which caption key names which control.
        text_key, slider_key = nbp._operate(e, text), nbp._operate(e, slider)
        assert text_key and slider_key and not nbp.report.problems, _explain(nbp.report)

        # (a) typing fast
        box, kb = nbp.control(text), nbp.page.keyboard
        box.focus()
        kb.press("ControlOrMeta+a")
        box.press_sequentially(FAST_PROMPT, delay=0)
        if text.get("combobox"):
            kb.press("Enter")
        shown = nbp.wait_quiet(e)
        assert box.input_value() == FAST_PROMPT
        problems = nbp.stale_problems(e, text_key, "text", FAST_PROMPT)
        assert not problems, f"{nb.name}, typing fast: {problems}; shown {shown}"

        # (b) holding an arrow key
        handle = nbp.control(slider)
        now, top = float(handle.get_attribute("aria-valuenow")), float(handle.get_attribute("aria-valuemax"))
        start = nbp.readout(slider).inner_text()
        handle.focus()
        key = "ArrowRight" if top - now >= (top - float(handle.get_attribute("aria-valuemin"))) / 2 else "ArrowLeft"
        for _ in range(HOLD_PRESSES):
            kb.press(key)
        shown = nbp.wait_quiet(e)
        expected, tol = jlab.slider_expected(nbp.readout(slider).inner_text())
        assert expected != start.strip(), f"{nb.name}: {HOLD_PRESSES} x {key} did not move the slider"
        problems = nbp.stale_problems(e, slider_key, "slider", expected, tol)
        assert not problems, f"{nb.name}, holding {key}: {problems}; shown {shown}"

        # Negative controls: the check must be able to fail.
        assert nbp.stale_problems(e, text_key, "text", FAST_PROMPT + " again"), "a wrong text passed"
        assert nbp.stale_problems(e, slider_key, "slider", str(float(expected) + 1), tol), "a wrong value passed"
        state = shown["state"]
        old = state.replace(f"{text_key}={FAST_PROMPT}", f"{text_key}=hello")
        assert old != state
        for which in ("view", "caption"):  # an old picture under the new caption, and the reverse
            nbp.js("([e, w, s]) => gt.doctor(e, w, s)", [e, which, old])
            doctored = nbp.stale_problems(e, text_key, "text", FAST_PROMPT)
            nbp.js("([e, w, s]) => gt.doctor(e, w, s)", [e, which, state])
            assert doctored, f"a doctored {which} passed the stale check"
        assert not nbp.stale_problems(e, text_key, "text", FAST_PROMPT)
        nbp.screenshot(ARTIFACTS / f"fast_keys_{nb.stem}.png")
    finally:
        nbp.finish()
        nbp.close()


def test_negative_controls_for_the_audit_and_what_a_screen_reader_is_told(lab, chromium):
    """The fixture passes both checks and the keyboard walk; its caption stays tied to its own picture when another
    element of the page takes the caption's id (the same explorer shown twice). Then an unnamed slider handle and
    readout, an image without alt, an unnamed overlay and a picture cut from its caption are planted in its explorer,
    and the axe audit, the accessibility check and the keyboard walk must name them."""
    nbp = _opened(chromium, lab, FIXTURE)
    try:
        ex = nbp.js("() => gt.explorers()")[0]
        e = ex["id"]
        nbp.js("i => gt.scrollTo(i)", ex["cell"])
        assert not jlab.serious(jlab.audit(nbp.page))
        assert not nbp.accessibility_problems(e), nbp.accessibility_problems(e)
        assert not nbp.keyboard_walk(e), nbp.keyboard_walk(e)
        # the named readout is worth its Tab stop: a value typed there (digits that are JupyterLab's command-mode
        # shortcuts: 1 and 2 make a cell a heading) sets the slider, and no cell changes
        cells = nbp.js("() => gt.cells().map(c => c.type)")
        slider = next(c for c in ex["controls"] if c["kind"] == "slider")
        nbp.readout(slider).focus()
        nbp.js("() => window.getSelection().selectAllChildren(document.activeElement)")
        nbp.page.keyboard.type("12")
        nbp.page.keyboard.press("Enter")
        nbp.wait("e => gt.view(e).state.startsWith('n=12;')", e, what="the typed value to reach the caption",
                 timeout_ms=10000)
        assert nbp.js("() => gt.cells().map(c => c.type)") == cells
        # a copy of the caption's id earlier in the page (a second view of the same explorer): the explorer's own
        # front-end code gives its caption an id of its own at its next change, and the picture follows it
        tie = nbp.js("e => gt.captionTie(e)", e)
        nbp.js("""([e, id]) => { const decoy = document.createElement('div');
                  decoy.id = id; decoy.className = 'gt-decoy'; document.body.prepend(decoy);
                  gt.root(e).appendChild(document.createElement('span')); }""",
               [e, tie["captionId"]])
        nbp.wait("e => gt.captionTie(e).own", e, what="the caption to take an id of its own", timeout_ms=5000)
        assert nbp.js("e => gt.captionTie(e).captionId", e) != tie["captionId"]
        assert not nbp.picture_problems(e), nbp.picture_problems(e)
        nbp.js("() => document.querySelector('.gt-decoy').remove()")
        # a slider with no description (SliderNames has nothing to give it, and its observer would put back a
        # removed name while it has one) and so an unnamed readout, an image without alt, an overlay without a name,
        # and a caption without its id (the picture's aria-describedby leads nowhere)
        nbp.js("""e => { const r = gt.root(e), slider = r.querySelector('.widget-slider');
                  const label = slider.querySelector('.widget-label');
                  label.textContent = ''; label.removeAttribute('title');
                  slider.querySelector('[role="slider"]').removeAttribute('aria-label');
                  slider.querySelector('.widget-readout').removeAttribute('aria-label');
                  const img = document.createElement('img');
                  img.src = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
                  r.querySelector('.gt-view').appendChild(img);
                  r.querySelector('.gt-view').insertAdjacentHTML('beforeend', '<svg width="9" height="9"></svg>');
                  r.querySelector('.gt-caption').removeAttribute('id'); }""", e)
        planted = jlab.audit(nbp.page)
        assert {"aria-input-field-name", "image-alt"} <= {v["rule"] for v in planted["ours"]["violations"]}, planted
        told = nbp.accessibility_problems(e)
        assert any("slider without a name" in p for p in told), told
        assert any("image(s) in the picture without a name" in p for p in told), told
        assert any("not tied to its caption" in p for p in told), told
        walked = nbp.keyboard_walk(e)
        assert any("tab stop a screen reader cannot name" in p for p in walked), walked
    finally:
        nbp.close()
