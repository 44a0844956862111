"""Save and load model weights as safetensors files (plain tensors + the config, no pickle)."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from safetensors import safe_open

from helpers.model.config import Config
from helpers.model.transformer import Transformer


def save(model: Transformer, path: str | Path, dtype: torch.dtype | None = None, **metadata: str) -> None:
    """Write every parameter under its module path (e.g. ``embed.W_E``) and the config.

    dtype: store the weights in this type (e.g. torch.float16 halves the file); ``load`` returns float32.
    """
    tensors = {k: (v.detach() if dtype is None else v.detach().to(dtype)).contiguous()
               for k, v in model.state_dict().items()}
    meta = {"config": json.dumps(model.cfg.to_dict()), **{k: str(v) for k, v in metadata.items()}}
    save_file(tensors, str(path), metadata=meta)


def metadata(path: str | Path) -> dict[str, str]:
    with safe_open(str(path), framework="pt") as f:
        return dict(f.metadata() or {})


def load(path: str | Path) -> Transformer:
    """Build a model from the config stored in the file, then load its weights."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No checkpoint at '{path}'.")
    meta = metadata(path)
    if "config" not in meta:
        raise ValueError(f"'{path}' has no stored config; use load_into(model, path) with a model you build.")
    model = Transformer(Config(**json.loads(meta["config"])))
    return load_into(model, path)


def load_into(model: Transformer, path: str | Path) -> Transformer:
    """Load weights into an existing model, saying exactly which tensors do not fit."""
    tensors = load_file(str(path))
    own = model.state_dict()
    problems = []
    for name in sorted(set(own) | set(tensors)):
        if name not in tensors:
            problems.append(f"{name}: the model has it {tuple(own[name].shape)}, the file does not")
        elif name not in own:
            problems.append(f"{name}: the file has it {tuple(tensors[name].shape)}, the model does not")
        elif own[name].shape != tensors[name].shape:
            problems.append(f"{name}: the model expects shape {tuple(own[name].shape)}, "
                            f"the file has {tuple(tensors[name].shape)}")
    if problems:
        raise ValueError(f"The checkpoint '{path}' does not fit this model's config:\n  " + "\n  ".join(problems))
    model.load_state_dict(tensors)
    return model


def checkpoints_dir() -> Path:
    """The repository's ``checkpoints/`` folder (written by ``tools/train_models.py``)."""
    return Path(__file__).resolve().parents[2] / "checkpoints"


def named_path(name: str) -> Path:
    """Where the registry model ``name`` lives: checkpoints/<name>.safetensors in this repository,
    wherever the notebook that asks is (a learner's copy in another folder works too)."""
    return checkpoints_dir() / f"{name}.safetensors"


def load_named(name: str) -> tuple[Transformer, dict[str, str]]:
    """Load the registry model ``name`` (e.g. "full1") from checkpoints/: (model, its metadata).

    A missing file says how to make it, instead of a bare FileNotFoundError.
    """
    path = named_path(name)
    if not path.is_file():
        raise FileNotFoundError(f"No checkpoint '{name}' at {path}. Train it with "
                                f"`.venv/bin/python tools/train_models.py {name}` (GT_THREADS=1 on a shared machine).")
    return load(path), metadata(path)
