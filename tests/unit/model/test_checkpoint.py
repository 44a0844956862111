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
    with pytest.raises(FileNotFoundError, match=r"tools\.train_models no_such_model"):
        checkpoint.load_named("no_such_model")


def test_param_formula_matches_models():
    from helpers.model.params import count_config, count_params

    for cfg in (CFG, Config(n_vocab=30, d_model=12, n_ctx=7, n_layers=2, n_heads=3, d_mlp=48, layernorm=True),
                Config(n_vocab=30, d_model=12, n_ctx=7, n_layers=1, n_heads=2, positional=False)):
        assert count_config(cfg) == fresh_model(cfg).n_params()
    # GPT-2 Small / XL with attention biases and a tied unembedding: the published exact totals
    assert count_params(768, 12, 64, 3072, 12, 50257, 1024, attn_biases=True, tied_unembed=True)["total"] == 124_439_808
    xl = count_params(1600, 25, 64, 6400, 48, 50257, 1024, attn_biases=True, tied_unembed=True)
    assert xl["total"] == 1_557_611_200
    with pytest.raises(ValueError, match="n_vocab"):
        count_params(8, 1, 8, 32, 1, 0, 4)


# --------------------------------------------------------------------------- the causal mask travels with the file
def test_a_model_trained_without_the_mask_loads_without_it(tmp_path):
    cfg = Config(n_vocab=20, d_model=8, n_ctx=5, n_layers=1, n_heads=2, masked=False)
    model = fresh_model(cfg)
    assert not any(b.attn.masked for b in model.blocks)
    path = tmp_path / "nomask.safetensors"
    checkpoint.save(model, path)
    loaded = checkpoint.load(path)
    assert loaded.cfg.masked is False and not any(b.attn.masked for b in loaded.blocks)
    t = torch.tensor([1, 2, 3, 4])
    torch.testing.assert_close(loaded(t), model(t))


@pytest.mark.parametrize("flag, masked", [("false", False), ("true", True), (None, True)])
def test_older_files_keep_the_mask_setting_in_their_metadata(tmp_path, flag, masked):
    """Files written before Config had ``masked`` (attn1_nomask among them) say it in the metadata."""
    model = fresh_model(Config(n_vocab=20, d_model=8, n_ctx=5, n_layers=1, n_heads=2))
    d = model.cfg.to_dict()
    d.pop("masked")
    meta = {"config": json.dumps(d)} | ({} if flag is None else {"masked": flag})
    path = tmp_path / "old.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path), metadata=meta)
    loaded = checkpoint.load(path)
    assert loaded.cfg.masked is masked and all(b.attn.masked is masked for b in loaded.blocks)


def test_the_shipped_unmasked_model_loads_unmasked():
    cheat, meta = checkpoint.load_named("attn1_nomask")
    assert meta["masked"] == "false" and cheat.cfg.masked is False
    assert not any(b.attn.masked for b in cheat.blocks)
    model, _ = checkpoint.load_named("attn1")
    assert model.cfg.masked and all(b.attn.masked for b in model.blocks)


# --------------------------------------------------------------------------- damaged files (made here, in tmp_path)
REGENERATE = ".venv/bin/python -m tools.train_models attn9"


def _good_file(tmp_path) -> bytes:
    path = tmp_path / "good.safetensors"
    checkpoint.save(fresh_model(CFG), path, note="x")
    return path.read_bytes()


def _damaged(tmp_path, data: bytes):
    path = tmp_path / "attn9.safetensors"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("cut", [4, 20, 0.5, -10])
def test_a_truncated_file_says_it_was_cut_short(tmp_path, cut):
    good = _good_file(tmp_path)
    end = cut if isinstance(cut, int) and cut > 0 else (int(len(good) * cut) if isinstance(cut, float) else cut)
    path = _damaged(tmp_path, good[:end])
    for read in (checkpoint.load, checkpoint.metadata):
        with pytest.raises(checkpoint.CheckpointError) as e:
            read(path)
        msg = str(e.value)
        assert str(path) in msg and REGENERATE in msg
        assert ("cut short" in msg) or ("too few to be a safetensors file" in msg), msg
        assert "SafetensorError" not in msg and "deserializing" not in msg
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("data", [b"", b"hello, this is a text file and not a model\n" * 3, b"PK\x03\x04" + bytes(200)])
def test_a_file_that_is_not_safetensors_says_so(tmp_path, data):
    path = _damaged(tmp_path, data)
    with pytest.raises(checkpoint.CheckpointError) as e:
        checkpoint.load(path)
    msg = str(e.value)
    assert str(path) in msg and REGENERATE in msg
    assert ("not a safetensors file" in msg) or ("too few to be a safetensors file" in msg), msg


def test_a_garbled_header_says_so(tmp_path):
    good = bytearray(_good_file(tmp_path))
    good[9:15] = b"@@@@@@"  # inside the JSON description of the tensors
    with pytest.raises(checkpoint.CheckpointError, match="garbled.*" + REGENERATE.replace(".", r"\.")):
        checkpoint.load(_damaged(tmp_path, bytes(good)))


def test_weights_of_another_shape_than_the_stored_config(tmp_path):
    """A file whose tensors disagree with the config stored beside them (e.g. weights swapped in)."""
    model = fresh_model(CFG)
    tensors = {k: v.contiguous() for k, v in model.state_dict().items()}
    tensors["embed.W_E"] = torch.zeros(8, 21)  # n_vocab 21, but the stored config says 20
    path = tmp_path / "attn9.safetensors"
    save_file(tensors, str(path), metadata={"config": json.dumps(CFG.to_dict())})
    with pytest.raises(checkpoint.CheckpointError) as e:
        checkpoint.load(path)
    msg = str(e.value)
    assert str(path) in msg and REGENERATE in msg and "do not have the shapes its own stored config gives" in msg
    assert "embed.W_E: the model expects shape (8, 20), the file has (8, 21)" in msg


def test_a_damaged_stored_config_says_so(tmp_path):
    model = fresh_model(CFG)
    tensors = {k: v.contiguous() for k, v in model.state_dict().items()}
    path = tmp_path / "attn9.safetensors"
    for config, words in (("{not json", "not valid JSON"), (json.dumps(CFG.to_dict() | {"d_modle": 8}), "d_modle"),
                          (json.dumps(CFG.to_dict() | {"d_model": -1}), "d_model must be at least 1")):
        save_file(tensors, str(path), metadata={"config": config})
        with pytest.raises(checkpoint.CheckpointError, match=words) as e:
            checkpoint.load(path)
        assert REGENERATE in str(e.value)


def test_the_command_names_the_registry_model_inside_checkpoints():
    hint = checkpoint.regenerate_hint(checkpoint.named_path("attn1"))
    assert hint == "Regenerate it with `.venv/bin/python -m tools.train_models attn1`."
