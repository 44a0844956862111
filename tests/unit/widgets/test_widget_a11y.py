"""What a screen reader is told by every explorer, checked in the kernel (tests/browser checks the page itself).

* Every control an explorer puts in the Tab order has a name: its description (a ToggleButtons' options are its
  buttons' names); the front-end code (helpers.widgets.a11y) puts it on the slider handles and editable readouts.
* A SelectionSlider, whose readout ipywidgets makes editable although typing there changes nothing, is marked for the
  front-end code, which takes that readout out of the Tab order.
* The picture is tied to its caption: the caption's id is named by the picture's aria-describedby, on the first
  drawing, after a change and on an error; one id per explorer.
* No image in a picture is left unnamed: every <img> has an alt, every outer <svg> is a named image or hidden from
  the accessibility tree (an attention pattern's overlay: its image's alt says what the frames mark).

Every Explorer subclass in helpers/widgets is built here (a new one fails the first test until it is added).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from html.parser import HTMLParser

import ipywidgets as W
import pytest
import torch

import helpers.widgets
from helpers import ngrams
from helpers.lessons import induction
from helpers.data import default_data
from helpers.lessons.facts import FactsTask
from helpers.model import Config
from helpers.plots.attention import pattern_html, pattern_image_html
from helpers.plots.palette import AFTER, EARLIER
from helpers.train import fresh_model
from helpers.widgets.a11y import ESM, FIXED_READOUT, SliderNames, mark_readouts, named
from helpers.widgets.base import Explorer

SLIDERS = (W.IntSlider, W.FloatSlider, W.FloatLogSlider, W.IntRangeSlider, W.FloatRangeSlider)
CHOICE_SLIDERS = (W.SelectionSlider, W.SelectionRangeSlider)
NAMED_BY_DESCRIPTION = (W.Text, W.Textarea, W.Combobox, W.Checkbox, W.ToggleButton, W.Button, W.IntText,
                        W.FloatText, W.BoundedIntText, W.BoundedFloatText)


@pytest.fixture(scope="module")
def explorers() -> dict[str, Explorer]:
    """One explorer of each kind, on small untrained models (what is tested here does not depend on the weights)."""
    from helpers.widgets.attention import HeadsExplorer, LastTokenExplorer, PaddingExplorer, PatternExplorer
    from helpers.widgets.circuits import CircuitExplorer
    from helpers.widgets.embeddings import SoftmaxPlayground, ZeroLayerVsBigram
    from helpers.widgets.induction import InductionExplorer, TrainingExplorer
    from helpers.widgets.ladder import LadderExplorer, LensExplorer
    from helpers.widgets.layernorm import LayerNormExplorer
    from helpers.widgets.mlp import FactNeuronExplorer
    from helpers.widgets.ngrams import NgramExplorer
    from helpers.widgets.superposition import ToyExplorer
    from helpers.lessons.superposition import sweep

    data = default_data()
    tok = data.tokenizer
    words = fresh_model(Config(n_vocab=tok.n_vocab, d_model=16, n_ctx=16, n_layers=2, n_heads=2, d_mlp=32), seed=0)
    zero = fresh_model(Config(n_vocab=tok.n_vocab, d_model=8, n_ctx=4), seed=0)
    chars = fresh_model(induction.config(), seed=0)
    run = induction.train_induction(fresh_model(induction.config(), seed=0), max_steps=20, threshold=None,
                                    eval_every=10, progress=False)
    task = FactsTask.make(n_people=8, n_things=2, n_colours=4, seed=0)
    facts = fresh_model(Config(n_vocab=task.n_vocab, d_model=16, n_ctx=2, n_layers=1, n_heads=2, d_mlp=64), seed=0)
    built = [NgramExplorer(data, prompt="and god said"),
             ZeroLayerVsBigram(zero, ngrams.bigram_probs(data.train_ids[:5000], data.n_vocab), tok, token="god"),
             SoftmaxPlayground(),
             LastTokenExplorer(words, tok, text="and god said"),
             PaddingExplorer(),
             HeadsExplorer(words, tok, text="and god said , let there be light"),
             PatternExplorer(words, tok, text="and god said"),
             CircuitExplorer(chars, layer=1, head=0, token="a"),
             InductionExplorer(chars, previous_head=0, induction_head=1, text="abcdefabcde"),
             TrainingExplorer(chars, run, previous_head=0, induction_head=1),
             LadderExplorer({"zero": zero, "two layers": words}, tok, prompt="and god"),
             LensExplorer(words, tok, prompt="and god said"),
             LayerNormExplorer(),
             FactNeuronExplorer(facts, task),
             ToyExplorer(sweep([1.0, 0.01], [0.9, 1.0], steps=1), [1.0, 0.01], [0.9, 1.0])]
    return {type(e).__name__: e for e in built}


def _all_explorer_classes() -> set[str]:
    for info in pkgutil.iter_modules(helpers.widgets.__path__):
        importlib.import_module(f"helpers.widgets.{info.name}")
    found, todo = set(), [Explorer]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("helpers.widgets."):
                found.add(sub.__name__)
            todo.append(sub)
    return found


def _widgets(ws):
    for w in ws:
        yield w
        yield from _widgets(getattr(w, "children", ()))


def unnamed_controls(explorer: Explorer) -> list[str]:
    """The controls of ``explorer`` a screen reader could not name, and SelectionSliders not marked for the front-end
    code: one line each (empty: none)."""
    problems = []
    for w in _widgets(explorer.controls):
        kind = type(w).__name__
        if isinstance(w, W.Box):
            continue
        if isinstance(w, SLIDERS + CHOICE_SLIDERS + NAMED_BY_DESCRIPTION) and not w.description.strip():
            problems.append(f"a {kind} without a description (its handle, readout or box would have no name)")
        elif isinstance(w, W.ToggleButtons):
            if not w.description.strip():
                problems.append(f"a {kind} without a description (its group would have no name)")
            if not all(str(label).strip() for label in w._options_labels):
                problems.append(f"a {kind} with an unlabelled button: {w._options_labels}")
        elif not isinstance(w, SLIDERS + CHOICE_SLIDERS + NAMED_BY_DESCRIPTION + (W.ToggleButtons,)):
            problems.append(f"a {kind}: not known here to be named; add it to this test with how it is named")
        if isinstance(w, CHOICE_SLIDERS) and FIXED_READOUT not in w._dom_classes:
            problems.append(f"a {kind} ({w.description!r}) not marked {FIXED_READOUT}: its editable readout, where "
                            "typing changes nothing, would stay in the Tab order")
    if sum(isinstance(c, SliderNames) for c in explorer.box.children) != 1:
        problems.append("not exactly one SliderNames in the explorer's box: nothing names the handles and readouts")
    return problems


def caption_tie_problems(explorer: Explorer) -> list[str]:
    """What breaks the tie between ``explorer``'s caption and picture, as drawn now (empty: tied)."""
    cap = re.match(r'<div class="gt-caption[^"]*"[^>]*>', explorer.caption.value)
    view = re.match(r'<div class="gt-view"[^>]*>', explorer.view.value)
    if not cap or not view:
        return ["no caption or no picture root"]
    ids = re.findall(r'\bid="([^"]*)"', cap.group(0))
    described = re.findall(r'\baria-describedby="([^"]*)"', view.group(0))
    problems = []
    if len(ids) != 1 or not re.fullmatch(r"[A-Za-z][\w-]*", ids[0]):
        problems.append(f"the caption has no usable id: {cap.group(0)[:120]}")
    elif described != ids:
        problems.append(f"the picture's aria-describedby {described} does not name the caption's id {ids}")
    if 'role="figure"' not in view.group(0):
        problems.append(f"the picture root is not a figure: {view.group(0)[:120]}")
    return problems


class _Images(HTMLParser):
    """Every <img> and outermost <svg> of an HTML string, with its attributes and whether an ancestor hides it."""

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, bool]] = []   # (tag, hidden from the accessibility tree)
        self.images: list[tuple[str, dict, bool]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        hidden = (bool(self.stack) and self.stack[-1][1]) or a.get("aria-hidden") == "true"
        in_svg = any(t == "svg" for t, _ in self.stack)
        if tag == "img" or (tag == "svg" and not in_svg):
            self.images.append((tag, a, hidden))
        if tag not in ("img", "br", "hr", "input", "rect", "line", "path", "circle", "polyline", "text", "meta"):
            self.stack.append((tag, hidden))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break


def unnamed_images(picture_html: str) -> list[str]:
    parser = _Images()
    parser.feed(picture_html)
    problems = []
    for tag, a, hidden in parser.images:
        if hidden:
            continue
        if tag == "img" and not (a.get("alt") or "").strip():
            problems.append(f"an <img> without alt: {str(a)[:100]}")
        if tag == "svg" and not (a.get("role") == "img" and (a.get("aria-label") or "").strip()):
            problems.append(f"an <svg> neither named (role=img, aria-label) nor aria-hidden: {str(a)[:100]}")
    return problems


# --- every explorer ------------------------------------------------------------------------------------------------

def test_every_explorer_of_the_series_is_checked_here(explorers):
    assert set(explorers) == _all_explorer_classes()


def test_every_focusable_control_has_a_name(explorers):
    for name, e in explorers.items():
        assert not unnamed_controls(e), (name, unnamed_controls(e))
    assert any(isinstance(w, CHOICE_SLIDERS) for e in explorers.values() for w in e.controls)   # 06's and 09's


def test_the_names_check_can_fail():
    class Bare(Explorer):
        def __init__(self):
            super().__init__([W.IntSlider(), W.ToggleButtons(options=["a", ""]), W.Text(description="ok")])

        def render(self):
            return "", {}, ""

    found = unnamed_controls(Bare())
    assert any("IntSlider without a description" in p for p in found), found
    assert any("ToggleButtons without a description" in p for p in found)
    assert any("unlabelled button" in p for p in found) and len(found) == 3
    unmarked = W.SelectionSlider(options=["a", "b"], description="pick")
    assert FIXED_READOUT not in unmarked._dom_classes
    mark_readouts([W.HBox([unmarked])])                       # found inside a box too
    assert FIXED_READOUT in unmarked._dom_classes


def test_a_selection_slider_shown_outside_an_explorer_is_marked_too():
    s = W.SelectionSlider(options=["a", "b"], description="pick")
    box = named(s)
    assert FIXED_READOUT in s._dom_classes and isinstance(box.children[-1], SliderNames)


def test_the_front_end_code_names_readouts_and_keeps_each_copys_caption_id():
    """What SliderNames' code does in the page is tested in tests/browser; here, that it is the code that does it."""
    assert ".widget-readout" in ESM and "'role', 'textbox'" in ESM and "`${name} value`" in ESM
    assert f"'{FIXED_READOUT}'" in ESM and "'contenteditable', 'false'" in ESM
    assert "'contenteditable'" in ESM.split("attributeFilter")[1].split("]")[0]   # ipywidgets sets it back
    assert "aria-describedby" in ESM and "getElementById(cap.id) !== cap" in ESM


def test_every_picture_is_tied_to_its_caption_and_only_its_own(explorers):
    ids = set()
    for name, e in explorers.items():
        assert not caption_tie_problems(e), (name, caption_tie_problems(e))
        ids.add(e.caption_id)
    assert len(ids) == len(explorers)


def test_the_tie_holds_after_a_change_and_on_an_error(explorers):
    e = explorers["NgramExplorer"]
    first = e.view.value
    e.n.value = 3
    assert e.view.value != first and not caption_tie_problems(e)
    e.prompt.value = "   "
    assert e.last_error and not caption_tie_problems(e), e.caption.value
    e.prompt.value = "and god said"
    assert not e.last_error and not caption_tie_problems(e)


def test_the_tie_check_can_fail(explorers):
    e = explorers["PaddingExplorer"]
    caption, view = e.caption.value, e.view.value
    try:
        e.view.value = view.replace(f'aria-describedby="{e.caption_id}"', 'aria-describedby="elsewhere"')
        assert caption_tie_problems(e)
        e.view.value = view
        e.caption.value = caption.replace(f' id="{e.caption_id}"', "")
        assert caption_tie_problems(e)
    finally:
        e.caption.value, e.view.value = caption, view
    assert not caption_tie_problems(e)


def test_no_picture_holds_an_unnamed_image(explorers):
    for name, e in explorers.items():
        assert not unnamed_images(e.view.value), (name, unnamed_images(e.view.value))


# --- the attention pattern's overlay --------------------------------------------------------------------------------

def test_the_pattern_overlay_is_hidden_and_its_frames_are_in_the_images_words():
    A = torch.tensor([[1.0, 0, 0, 0], [0.5, 0.5, 0, 0], [0.1, 0.8, 0.1, 0], [0.1, 0.1, 0.8, 0]])  # copies
    future = torch.ones(4, 4, dtype=torch.bool).triu(1)
    ids = induction.encode("abab")
    from helpers.interp.scores import duplicate_token_mask, induction_mask
    from helpers.widgets.induction import FRAMES

    marks = {EARLIER: duplicate_token_mask(ids).numpy(), AFTER: induction_mask(ids).numpy()}
    out = pattern_image_html(A, list("abab"), query=3, masked=future, marks=marks, label="head 1", mark_words=FRAMES)
    assert re.search(r'<svg [^>]*aria-hidden="true"', out) and not unnamed_images(out)
    alt = re.search(r'alt="([^"]*)"', out).group(1).replace("&#x27;", "'")
    assert "Framed orange, the token after an earlier copy (where an induction head looks): 2 cells in 2 rows, " \
           "holding 0.80 of those rows' weight on average." in alt, alt      # query 3 on 'b' 2, query 4 on 'a' 3
    assert "Framed black, an earlier copy of the query's token: 2 cells in 2 rows, holding 0.10 of those rows' " \
           "weight on average." in alt                       # query 3 on 'a' at 1, query 4 on 'b' at 2: 0.10 each
    table = pattern_html(A, list("abab"), query=3, masked=future, marks=marks, mark_words=FRAMES)
    assert "Framed orange, the token after an earlier copy" in table
    bare = pattern_image_html(A, list("abab"), masked=future, labels=False)   # 05's and 11's: nothing framed
    assert re.search(r'<svg [^>]*aria-hidden="true"', bare) and not unnamed_images(bare)
    assert "Framed" not in bare


def test_the_image_check_can_fail():
    assert unnamed_images('<div><svg width="9" height="9"><rect/></svg></div>')
    assert unnamed_images('<img src="x.png">')
    assert not unnamed_images('<svg role="img" aria-label="bars"><svg><rect/></svg></svg><img alt="a">')
    assert not unnamed_images('<div aria-hidden="true"><svg></svg></div>')
