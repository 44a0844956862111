"""Every model in tools/train_models.py's registry is shipped, loads with the current code, and
still reaches the held-out loss its metadata records (so a code change that silently alters the
model shows up here)."""

import json

import pytest
import torch

from helpers.data import default_data
from helpers.model import checkpoint
from helpers.model.config import Config
from helpers.model.names import key

from tools import train_models

# every shipped checkpoint on the held-out set: about 20 s of CPU, a third of the fast tier's
pytestmark = [pytest.mark.slow, pytest.mark.each_python]


@pytest.mark.parametrize("name", list(train_models.REGISTRY))
def test_checkpoint_reaches_its_recorded_heldout_loss(name):
    path = checkpoint.named_path(name)
    assert path.is_file(), f"{path} is missing: run `.venv/bin/python -m tools.train_models {name}`"
    meta = checkpoint.metadata(path)
    data = train_models.spec_data(name)  # the vocabulary it was trained with (2,000 words unless its Spec says)
    assert meta["vocab_hash"] == train_models.vocab_hash(data.tokenizer), \
        f"{name} was trained with a different vocabulary: retrain it"
    model = checkpoint.load(path)
    spec = train_models.REGISTRY[name]
    assert model.cfg == Config(n_vocab=data.n_vocab, **spec.config)
    assert meta.get("masked", "true") == str(spec.masked).lower()  # (attn1, attn2 predate the key)
    loss = train_models.heldout_loss(model, data, spec.masked)
    assert abs(loss - float(meta["heldout_loss"])) < 0.005, (name, loss, meta["heldout_loss"])
    assert json.loads(meta["heldout_curve"])  # the training curve is recorded
    assert path.stat().st_size < spec.size_limit  # float16 weights keep each file small (1 MB unless stated)


def test_registry_lists_and_rejects_unknown_names(capsys):
    assert train_models.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert "attn1" in out
    assert all(f"{name:13s} (experiment, not shipped)" in out for name in train_models.EXPERIMENTS)
    assert train_models.main(["no_such_model"]) == 2


# The recognisable heads the notebooks name (04's widget default, 05's table): model -> (layer, head).
PREVIOUS_TOKEN_HEADS = {"attn1": (0, 2), "attn2": (1, 3)}


@pytest.mark.parametrize("name", list(PREVIOUS_TOKEN_HEADS))
def test_shipped_model_has_its_previous_token_head(name):
    """Over held-out windows, the named head puts most of each row's weight on the previous token,
    and more than any other head of the model does."""
    from helpers.model.attention import pattern_stats

    model = checkpoint.load(checkpoint.named_path(name))
    n_ctx = model.cfg.n_ctx
    windows = default_data().heldout_ids[: 100 * n_ctx].reshape(100, n_ctx)  # notebook 05's windows
    _, cache = model.run_with_cache(windows)
    previous = torch.stack([pattern_stats(cache[key(layer, "A")])["previous"] for layer in range(model.cfg.n_layers)])
    layer, head = PREVIOUS_TOKEN_HEADS[name]
    assert previous[layer, head] > 0.5, (name, previous)
    assert previous[layer, head] == previous.max(), (name, previous)


@pytest.mark.parametrize("name", list(train_models.INDUCTION))
def test_induction_models_are_notebook_09s_recipes_and_still_copy(name):
    """Exercise 9.3's references and notebook 10's model (notebook 09's recipe, seeds 0-2, float32), and the lesson
    of the earlier, periodic recipe: they load as notebook 09's model and still give the head scores, repeat loss and
    copying by position their metadata recorded when they were written."""
    from helpers.lessons.induction import copy_by_position, probe_tokens, repeat_loss
    from helpers.interp.scores import head_scores

    path = checkpoint.named_path(name)
    assert path.is_file(), f"{path} is missing: run `.venv/bin/python -m tools.train_models {name}`"
    model, meta = checkpoint.load_named(name)
    assert model.cfg == train_models.induction_config(name)
    assert int(meta["seed"]) == train_models.INDUCTION[name]
    assert json.loads(meta["recipe"]) == train_models.induction_recipe(name)
    assert all(p.dtype == torch.float32 for p in model.parameters())
    probe = probe_tokens(model.cfg.n_ctx)
    scores = head_scores(model, probe, which=("previous", "induction"))
    for kind in ("previous", "induction"):
        assert torch.allclose(scores[kind], torch.tensor(json.loads(meta[f"{kind}_scores"])), atol=0.002), kind
    first, repeat = repeat_loss(model, probe)
    assert abs(first - float(meta["repeat_loss_first"])) < 0.002
    assert abs(repeat - float(meta["repeat_loss_second"])) < 0.002
    assert max(scores["induction"][1]) > 0.8 and max(scores["previous"][0]) > 0.3 and repeat < 0.5
    by_k = copy_by_position(model)
    assert torch.allclose(by_k, torch.tensor(json.loads(meta["copy_by_position"])), atol=0.002)
    if name == "induction_periodic":   # notebook 09's lesson: copies from the first 16 positions only
        assert float(by_k[:16].min()) > 0.3 and float(by_k[16:].max()) < 0.1
    else:                              # notebook 09's recipe: from every position
        assert float(by_k[1:].min()) > 0.4
    assert path.stat().st_size < 300_000
