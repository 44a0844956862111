"""Notebook 09's explorers (the induction pattern, training step by step) and notebook 10's side-by-side view of
the trained and the hand-built induction models."""

from __future__ import annotations

import pytest
import torch

from helpers.lessons import by_hand
from helpers.lessons.induction import ALPHABET, config, train_induction
from helpers.model import checkpoint
from helpers.plots.palette import AFTER, EARLIER
from helpers.train import fresh_model
from helpers.widgets.induction import InductionExplorer, TrainingExplorer


def test_induction_explorer_explains_bad_input_and_keeps_the_text():
    model = fresh_model(config(), seed=0)
    e = InductionExplorer(model, previous_head=0, induction_head=1, text="abcdab")
    assert e.last_state["guess"] in ALPHABET and e.last_error == ""
    assert "occurred before" in e.caption.value
    for bad, words in (("", "empty"), ("ab%", "not a token"), ("x" * 33, "n_ctx is 32")):
        e.text.value = bad
        assert words in e.last_error and "gt-error" in e.caption.value
        assert e.text.value == bad  # what the learner typed stays in the box
    e.text.value = "abc"
    assert "has not occurred before" in e.caption.value and e.last_error == ""
    with pytest.raises(ValueError, match="head 5 does not exist"):
        InductionExplorer(model, previous_head=5, induction_head=0)


def test_training_explorer_slides_without_touching_the_learners_model():
    model = fresh_model(config(), seed=0)
    run = train_induction(model, max_steps=20, threshold=None, eval_every=10, progress=False)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    e = TrainingExplorer(model, run, previous_head=0, induction_head=1)
    assert e.last_state["step"] == 20
    e.step.value = 10
    assert e.last_state["step"] == 10 and "Step 10" in e.caption.value and "<svg" in e.view.value
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_induction_explorer_frames_earlier_copies_and_their_successors():
    e = InductionExplorer(fresh_model(config(), seed=0), previous_head=0, induction_head=1, text="abcab")
    # per panel: earlier copies of a (query 4) and b (query 5), and the tokens after them (b, c)
    assert e.view.value.count(f'fill="none" stroke="{EARLIER}"') == 2 * 2
    assert e.view.value.count(f'fill="none" stroke="{AFTER}"') == 2 * 2
    e.text.value = "abcd"  # nothing repeats: nothing framed
    assert f'stroke="{EARLIER}"' not in e.view.value and f'stroke="{AFTER}"' not in e.view.value


# --- notebook 10: the trained and the hand-built model side by side ---------------------------------------

L = by_hand.Layout()


def test_explorer_shows_both_models(trained):
    hand = by_hand.from_circuits(*by_hand.induction_circuits(L))
    e = InductionExplorer(trained, 0, 1, text="Mr and Mrs Dursley. Mr and Mrs D", compare={"hand-built": (hand, 0, 0)})
    assert e.last_state["guess (hand-built)"] == "u" and float(e.last_state["on_successor (hand-built)"]) > 0.9
    words, _, view = e.render()
    assert "hand-built model" in words and "trained model" in words and view.count("<h3") == 2
    e.text.value = "abc"
    assert "has not occurred before" in e.render()[0]


def test_explorer_refuses_a_model_of_another_size(trained):
    with pytest.raises(ValueError, match="cannot read the same sequence"):
        InductionExplorer(trained, 0, 1, compare={"other": (checkpoint.load_named("attn2")[0], 0, 0)})
