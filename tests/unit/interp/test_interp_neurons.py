"""helpers.interp.neurons: hidden activations z and firing counts, by hand."""

import pytest
import torch
from support.interp_models import uniform_model

from helpers.lessons.facts import FactsTask
from helpers.interp.neurons import firing_counts, hidden
from helpers.model.config import Config
from helpers.train import fresh_model


def test_hidden_and_firing_by_hand():
    model = uniform_model(mlp=True)
    with torch.no_grad():
        model.blocks[0].mlp.W_1.copy_(torch.tensor([[1.0, 0.0], [0.0, -1.0]]))  # z = ReLU(x1[0]), ReLU(-x1[1])
    # x1 at the last position of [0, 1]: (0.5, 1.5) -> z = (0.5, 0); of [0]: (2, 0) -> z = (2, 0)
    torch.testing.assert_close(hidden(model, [0, 1]), torch.tensor([0.5, 0.0]))
    torch.testing.assert_close(hidden(model, [0, 1], position=0), torch.tensor([2.0, 0.0]))
    assert hidden(model, [[0, 1], [1, 1]]).shape == (2, 2)
    assert firing_counts(model, torch.tensor([[0, 1], [1, 1], [0, 0]])).tolist() == [2, 0]  # [1, 1]: x1 = (0, 2)


def test_firing_counts_of_a_facts_task():
    task = FactsTask.make(n_people=4, n_things=2, seed=0)
    model = fresh_model(Config(n_vocab=task.n_vocab, d_model=16, n_ctx=2, n_layers=1, n_heads=2, d_mlp=32))
    counts = firing_counts(model, task)
    prompts, _ = task.prompts()
    assert counts.shape == (32,) and torch.equal(counts, firing_counts(model, prompts))
    assert 0 < int(counts.sum()) < 32 * len(prompts)


def test_bad_input_is_explained():
    with pytest.raises(ValueError, match="layer 0 has no MLP: this model is attention-only \\(d_mlp = 0\\)"):
        hidden(uniform_model(), [0, 1])
    with pytest.raises(ValueError, match="layer 1 does not exist: this model has n_layers = 1"):
        firing_counts(uniform_model(mlp=True), torch.tensor([[0, 1]]), layer=1)
    with pytest.raises(ValueError, match="position 5 does not exist"):
        hidden(uniform_model(mlp=True), [0, 1], position=5)
