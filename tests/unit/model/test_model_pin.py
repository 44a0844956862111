"""The model's numbers stay as the learner has seen them: every shipped checkpoint's activations, and the output of
every intervention (ablation, mean ablation, path ablation to q, k, v, one head, the MLP and the logits, patching of
heads, states and x0, the patching sweep, the logit lens), equal the fingerprints in tests/support/model_pin.json,
written before the hook points replaced the model's edit slots (tests/support/model_pin.py says what a fingerprint
holds)."""

import json

import pytest
import torch

from support import model_pin

pytestmark = pytest.mark.slow  # every shipped checkpoint, every intervention


def test_every_checkpoint_and_intervention_matches_the_pin():
    torch.set_num_threads(1)
    problems = model_pin.compare(json.loads(model_pin.PIN.read_text()), model_pin.fingerprints())
    assert not problems, "\n".join(problems[:20])


def test_the_pin_notices_a_change():
    """One weight of one head moved by 1 % (a change far smaller than a wrong formula makes) fails the comparison."""
    pinned = json.loads(model_pin.PIN.read_text())

    def nudge(model):
        with torch.no_grad():
            model.blocks[1].attn.W_K[0, 0, 0] *= 1.01
    again = model_pin.fingerprints(only=["attn2"])
    moved = model_pin.fingerprints(only=["attn2"], tamper=nudge)
    assert not model_pin.compare({"attn2": pinned["attn2"]}, again)
    assert model_pin.compare({"attn2": pinned["attn2"]}, moved)
