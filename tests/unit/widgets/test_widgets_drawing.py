"""The explorers' drawing approach: HTML/SVG pictures that carry the caption's state, float
sliders that report the value a person chose, a caption that says when a change leaves the picture as
it was, no dropdowns (a keyboard can't change them in JupyterLab), and charts that parse as SVG with
their titles, labels and text alternatives."""

import ast
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import ipywidgets as W
import pytest
import torch

from helpers.plots import svg
from helpers.widgets.attention import PaddingExplorer
from helpers.widgets.base import Explorer, chosen
from helpers.widgets.embeddings import SoftmaxPlayground
from helpers.widgets.layernorm import LayerNormExplorer

WIDGETS = Path(__file__).resolve().parents[3] / "helpers" / "widgets"


def _states(e: Explorer) -> tuple[str, str]:
    cap = re.search(r'class="gt-caption[^"]*" data-state="([^"]*)"', e.caption.value).group(1)
    view = re.match(r'<div class="gt-view" data-state="([^"]*)"', e.view.value).group(1)
    return cap, view


def test_float_noise_from_the_browser_is_not_shown():
    e = PaddingExplorer()
    e.P.value = 3.55271e-15  # what the browser sent back for 0 after a few arrow presses
    assert e.last_state == {"P": 0.0}
    assert "softmax([1, 2, 0])" in e.caption.value and "e-15" not in e.caption.value + e.view.value
    e.P.value = 3.500000000000007
    assert e.last_state == {"P": 3.5} and "softmax([1, 2, 3.5])" in e.caption.value
    assert "3.500000000000007" not in e.caption.value + e.view.value
    s = SoftmaxPlayground()
    s.temperature.value = 1.2589254117941673
    s.sliders[0].value = -1.4999999999999998
    assert s.last_state["T"] == 1.26 and s.last_state["lord"] == -1.5
    ln = LayerNormExplorer()
    ln.gamma.value = 0.30000000000000004
    assert ln.last_state["gamma"] == 0.3


def test_chosen_rounds_to_the_step():
    assert chosen(W.FloatSlider(value=0.1 + 0.2, step=0.1)) == 0.3
    assert chosen(W.FloatSlider(value=-2.0000000001, min=-5, step=0.5)) == -2.0
    assert chosen(W.FloatSlider(value=1.0e-16, step=0.05)) == 0.0
    assert chosen(W.FloatLogSlider(value=0.031622776601683784, min=-2, max=2)) == 0.0316
    assert chosen(W.IntSlider(value=3)) == 3


def test_the_picture_carries_the_captions_state():
    e = PaddingExplorer(P=-2.0)
    cap, view = _states(e)
    assert cap == view == "P=-2.0"
    e.P.value = -30.0
    assert _states(e) == ("P=-30.0", "P=-30.0")


def test_a_change_that_draws_the_same_picture_says_so(data):
    from helpers.widgets.ngrams import NgramExplorer

    e = NgramExplorer(data, prompt="the children of", n=4)  # 3 tokens: at most a 4-gram
    assert "gt-same" not in e.caption.value
    e.n.value = 5
    assert e.last_state["order"] == 4
    assert "gt-same" in e.caption.value and "4-gram both times" in e.caption.value
    assert "at most a 4-gram" in e.caption.value  # the note that says why
    e.n.value = 2  # a real change: no such note
    assert "gt-same" not in e.caption.value


def test_an_error_clears_the_picture_and_recovers(data):
    from helpers.widgets.ngrams import NgramExplorer

    e = NgramExplorer(data, prompt="the lord")
    e.prompt.value = "   "
    assert _states(e) == ("error", "error") and "<svg" not in e.view.value
    e.prompt.value = "the lord"
    assert "<svg" in e.view.value and _states(e)[0] == _states(e)[1]


def test_no_explorer_uses_a_dropdown():
    """A focused <select> in JupyterLab loses ArrowDown and letters to the notebook's shortcuts."""
    for path in WIDGETS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("Dropdown", "Select", "SelectMultiple",
                                                                 "RadioButtons"):
                raise AssertionError(f"{path.name}:{node.lineno} uses W.{node.attr}; use base.choice "
                                     "(buttons) or a SelectionSlider so the keyboard can change it")


def test_no_explorer_draws_with_matplotlib():
    for path in WIDGETS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                       [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(m.startswith(("matplotlib", "helpers.plots.basic")) for m in modules), \
                f"{path.name}:{node.lineno}: draw with helpers.plots.svg (base.py says why)"


def test_fact_explorer_reads_the_same_numbers_as_one_prompt_at_a_time():
    from helpers.lessons.facts import FactsTask
    from helpers.interp.neurons import hidden
    from helpers.model import Config
    from helpers.train import fresh_model
    from helpers.widgets.mlp import FactNeuronExplorer

    task = FactsTask.make(n_people=5, n_things=3, n_colours=4, seed=1)
    model = fresh_model(Config(n_vocab=task.n_vocab, d_model=8, n_ctx=2, n_layers=1, n_heads=2, d_mlp=16), 0)
    e = FactNeuronExplorer(model, task)
    for person in task.people:
        for thing in task.things:
            f = task.fact_index(person, thing)
            torch.testing.assert_close(e.Z[f], hidden(model, task.prompt(person, thing)))
            torch.testing.assert_close(e.p[f], model.next_token_probs(task.prompt(person, thing)))
    e.person.value, e.thing.value = task.people[4], task.things[2]
    assert _states(e)[0] == _states(e)[1] and f"person={task.people[4]};thing={task.things[2]}" in _states(e)[0]


def _parse(s: str) -> ET.Element:
    return ET.fromstring(s)


def test_svg_charts_are_valid_and_labelled():
    h = svg.hbars([("lord", 0.5), ("<unk>", 0.25), ("\n", 0.125)], title="after 'the' & more", xlabel="p")
    root = _parse(h)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert root.get("aria-label").startswith("after 'the' & more. p, 3 bars, largest first: 'lord' 0.500")
    assert root.find("{http://www.w3.org/2000/svg}title").text == "after 'the' & more"
    assert {"lord", "<unk>", "⏎", "0.500", "0.250", "p"} <= set(texts)
    widths = [float(r.get("width")) for r in root.iter("{http://www.w3.org/2000/svg}rect")]
    assert widths[0] == pytest.approx(2 * widths[1], rel=0.01) and widths[1] == pytest.approx(2 * widths[2], rel=0.01)

    v = svg.vbars(["a", "b"], [-2.0, 3.0], title="logits", ylim=(-5.5, 5.5), ylabel="logit", fmt=".1f")
    texts = [t.text for t in _parse(v).iter("{http://www.w3.org/2000/svg}text")]
    assert "−2.0" in texts and "3.0" in texts and "−3" in texts and "logit" in texts
    many = svg.vbars([], list(range(-3, 60)), fmt=None, marks=[62], title="z")
    assert "62" in [t.text for t in _parse(many).iter("{http://www.w3.org/2000/svg}text")]

    hist = svg.histogram([1.0, 2.0, 2.0, 3.0], bins=3, title="x")
    rects = [float(r.get("height")) for r in _parse(hist).iter("{http://www.w3.org/2000/svg}rect")]
    assert len(rects) == 3 and rects[1] == pytest.approx(2 * rects[0])
    flat = svg.histogram([0.5] * 8, title="all equal")  # a zero spread must not divide by zero
    assert len(list(_parse(flat).iter("{http://www.w3.org/2000/svg}rect"))) == 1


def test_grid_and_ticks():
    g = svg.grid([[0.0, 1.0], [2.0, 4.0]], ["ann", "bo"], ["car", "hat"], title="neuron 3")
    assert g.count("<td title=") == 4 and 'title="bo hat: 4.00"' in g and "background:rgb(255,245,235)" in g  # 0: white
    assert "<th></th>" not in g and g.count('<th scope="col"') == 2 and g.count('<th scope="row"') == 2  # headers
    assert svg.ticks(0, 1) == [0.0, 0.25, 0.5, 0.75, 1.0] or svg.ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert svg.ticks(3, 3)  # an empty range still gets ticks


@pytest.fixture(scope="module")
def data():
    from helpers.data import default_data

    return default_data()


def test_pattern_image_is_the_tables_picture():
    """09's patterns travel as a PNG, n pixels a side: each pixel is the table's shade of a_ij over white,
    masked cells grey, and the frames and the query row are drawn over it."""
    import base64
    import io

    import matplotlib.image as mpimg
    import numpy as np

    from helpers.plots.attention import pattern_image_html

    A = torch.tensor([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.0, 0.5, 0.5]])
    future = torch.ones(3, 3, dtype=torch.bool).triu(1)
    marks = {"#1b9e77": np.eye(3, dtype=bool)}
    out = pattern_image_html(A, ["a", "b", "\n"], query=2, masked=future, cell=9, marks=marks)
    png = base64.b64decode(re.search(r"base64,([^\"]+)", out).group(1))
    pixels = mpimg.imread(io.BytesIO(png), format="png")[..., :3]  # (3, 3, 3) in [0, 1]
    assert pixels.shape == (3, 3, 3)
    blue = np.array([0x21, 0x66, 0xAC]) / 255
    assert np.allclose(pixels[0, 0], blue, atol=1 / 255) and np.allclose(pixels[2, 0], 1.0, atol=1 / 255)
    assert np.allclose(pixels[1, 0], 1 - 0.25 * (1 - blue), atol=1 / 255)
    assert np.allclose(pixels[0, 2], 0xEE / 255, atol=1 / 255)  # masked: grey, not white
    assert out.count('stroke="#1b9e77"') == 3 and out.count('stroke="#d62728"') == 1
    assert 'width="27"' in out and "⏎" in out and "image-rendering:pixelated" in out
