"""tools/train_models.py's pieces for models that are trained while watching for induction heads
(Spec.probe, Spec.max_vocab, EXPERIMENTS): the lean loss is the model's loss, the induction figures
mean what they say, the stop rule stops, and a Spec's vocabulary is the one its data uses."""

from types import SimpleNamespace

import pytest
import torch

from helpers.interp.sequences import repeated_tokens
from helpers.model.config import Config
from helpers.train import fresh_model

from tools import train_models


def tiny(n_vocab=40, n_ctx=16, **kw):
    return fresh_model(Config(n_vocab=n_vocab, d_model=16, n_ctx=n_ctx, n_layers=2, n_heads=2, **kw), seed=3)


@pytest.mark.parametrize("layernorm", [False, True])
def test_lean_loss_is_the_models_loss(layernorm):
    model = tiny(layernorm=layernorm, d_mlp=32 if layernorm else 0)
    batch = torch.randint(40, (5, 17), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert abs(float(train_models._lean_loss(model, batch)) - float(model.loss(batch))) < 1e-5


def test_repeat_halves_shapes_and_an_untrained_model_has_no_induction():
    model = tiny()
    rep = train_models.repeat_halves(model)
    assert rep["induction"].shape == rep["previous"].shape == (2, 2)
    assert float(rep["induction"].max()) < 0.2  # random weights: near-uniform attention over ~8 to 16 keys
    # nothing to remember yet, so the repeat is as surprising as the first half
    assert abs(rep["loss_repeat"] - rep["loss_first"]) < 0.1
    assert abs(rep["loss_first"] - torch.log(torch.tensor(40.0)).item()) < 0.2  # ~ ln n_vocab


def test_repeat_halves_splits_the_loss_at_the_predictable_tokens(monkeypatch):
    """First half: entries 0 ... half-2 (predicting tokens 1 ... half-1); repeat: entries half ... 2 half-2
    (tokens half+1 ... 2 half-1, the same tokens one half later; token half, the repeat's first, has no
    earlier successor to copy)."""
    import helpers.interp.loss

    ids = repeated_tokens(40, half=8, batch=8)
    assert torch.equal(ids[:, 1:8], ids[:, 9:])
    monkeypatch.setattr(helpers.interp.loss, "per_position_loss",
                        lambda model, tokens: torch.arange(tokens.shape[-1] - 1.0).expand(tokens.shape[0], -1))
    rep = train_models.repeat_halves(tiny(n_ctx=16))  # half = 8, entries 0 ... 14
    assert rep["loss_first"] == 3.0  # mean of 0 ... 6
    assert rep["loss_repeat"] == 11.0  # mean of 8 ... 14


def test_train_probed_records_every_probe_and_stops_by_its_rule():
    ids = torch.randint(40, (2000,), generator=torch.Generator().manual_seed(1))
    data = SimpleNamespace(train_ids=ids, heldout_ids=ids[:300])
    spec = train_models.Spec("test", steps=6, lr=1e-2, batch_size=4)
    hist, rows = train_models.train_probed(tiny(), data, spec, "test", every=2)
    assert [r["step"] for r in rows] == hist.eval_step == [2, 4, 6]
    assert set(rows[0]) >= {"heldout", "induction_l1", "previous_l0", "loss_first", "loss_repeat"}
    stop = train_models.Spec("test", steps=6, lr=1e-2, batch_size=4, stop_induction=0.0)  # always met
    hist, rows = train_models.train_probed(tiny(), data, stop, "test", every=2)
    assert [r["step"] for r in rows] == [2, 4]  # two probes in a row at or above the threshold


def test_experiments_are_kept_apart_from_the_shipped_registry():
    assert not set(train_models.EXPERIMENTS) & set(train_models.REGISTRY)
    for name in train_models.EXPERIMENTS:
        assert train_models.output_path(name).parent.name == "experiments"
        assert train_models.spec_of(name) is train_models.EXPERIMENTS[name]
    with pytest.raises(KeyError, match="no model 'attn9'"):
        train_models.spec_of("attn9")


def test_spec_data_uses_the_specs_vocabulary():
    assert train_models.spec_data("attn1").n_vocab == 2000
    spec = train_models.EXPERIMENTS["induction_kjv"]
    data = train_models.spec_data("induction_kjv")
    assert data.n_vocab == spec.max_vocab == 8000
    assert "moses" in data.tokenizer and "pharaoh" in data.tokenizer
