"""Checkpoints: safetensors round trip with the config, clear messages when they do not fit."""

import json

import pytest
import torch
from safetensors.torch import save_file

from helpers.model import checkpoint
from helpers.model.config import Config
from helpers.train import fresh_model

CFG = Config(n_vocab=20, d_model=8, n_ctx=5, layernorm=True)


def test_round_trip(tmp_path):
    model = fresh_model(CFG, seed=3)
    path = tmp_path / "m.safetensors"
    checkpoint.save(model, path, note="hello")
    meta = checkpoint.metadata(path)
    assert json.loads(meta["config"])["d_model"] == 8 and meta["note"] == "hello"
    loaded = checkpoint.load(path)
    assert loaded.cfg == CFG
    for (k, a), (k2, b) in zip(model.state_dict().items(), loaded.state_dict().items()):
        assert k == k2 and torch.equal(a, b)
    t = torch.tensor([1, 2, 3])
    assert torch.equal(model(t), loaded(t))


def test_wrong_shape_names_tensor_and_shapes(tmp_path):
    path = tmp_path / "m.safetensors"
    checkpoint.save(fresh_model(CFG), path)
    other = fresh_model(Config(n_vocab=20, d_model=16, n_ctx=5, layernorm=True))
    with pytest.raises(ValueError) as e:
        checkpoint.load_into(other, path)
    msg = str(e.value)
    assert "embed.W_E: the model expects shape (16, 20), the file has (8, 20)" in msg
    assert "ln_final.gamma" in msg


def test_missing_and_extra_tensors(tmp_path):
    path = tmp_path / "m.safetensors"
    checkpoint.save(fresh_model(Config(n_vocab=20, d_model=8, n_ctx=5)), path)
    with pytest.raises(ValueError, match="ln_final.gamma: the model has it \\(8,\\), the file does not"):
        checkpoint.load_into(fresh_model(CFG), path)
    path2 = tmp_path / "m2.safetensors"
    checkpoint.save(fresh_model(CFG), path2)
    with pytest.raises(ValueError, match="ln_final.beta: the file has it"):
        checkpoint.load_into(fresh_model(Config(n_vocab=20, d_model=8, n_ctx=5)), path2)


def test_missing_file_and_missing_config(tmp_path):
    with pytest.raises(FileNotFoundError, match="No checkpoint"):
        checkpoint.load(tmp_path / "nope.safetensors")
    bare = tmp_path / "bare.safetensors"
    save_file({"embed.W_E": torch.zeros(8, 20)}, str(bare))
    with pytest.raises(ValueError, match="no stored config"):
        checkpoint.load(bare)


def test_old_config_without_activation_loads(tmp_path):
    model = fresh_model(CFG)
    d = CFG.to_dict()
    d.pop("activation")
    path = tmp_path / "old.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path),
              metadata={"config": json.dumps(d)})
    assert checkpoint.load(path).cfg.activation == "relu"


def test_load_named_explains_missing_file():
    with pytest.raises(FileNotFoundError, match="tools/train_models.py no_such_model"):
        checkpoint.load_named("no_such_model")


def test_param_formula_matches_models():
    from helpers.model.params import count_config, count_params

    for cfg in (CFG, Config(n_vocab=30, d_model=12, n_ctx=7, n_layers=2, n_heads=3, d_mlp=48, layernorm=True),
                Config(n_vocab=30, d_model=12, n_ctx=7, n_layers=1, n_heads=2, positional=False)):
        assert count_config(cfg) == fresh_model(cfg).n_params()
    # GPT-2 Small / XL with attention biases and a tied unembedding: the published exact totals
    assert count_params(768, 12, 64, 3072, 12, 50257, 1024, attn_biases=True, tied_unembed=True)["total"] == 124_439_808
    assert count_params(1600, 25, 64, 6400, 48, 50257, 1024, attn_biases=True, tied_unembed=True)["total"] == 1_557_611_200
    with pytest.raises(ValueError, match="n_vocab"):
        count_params(8, 1, 8, 32, 1, 0, 4)
