"""Save and load model weights as safetensors files (plain tensors + the config, no pickle).

The config travels in the file's metadata, including whether the model was trained with the causal
mask (``Config.masked``), so a loaded model behaves as it did in training. A damaged file gets a
``CheckpointError`` naming the file, what is wrong in plain words, and the command that rewrites it.
"""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

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


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used. The message names the file, says in plain words what is
    wrong with it and gives the command that regenerates it."""


def regenerate_hint(path: str | Path) -> str:
    """The command that writes ``path`` again (the registry of tools/train_models.py names models by file stem)."""
    path = Path(path)
    hint = f"Regenerate it with `.venv/bin/python -m tools.train_models {path.stem}`"
    if path.resolve().parent != checkpoints_dir():
        hint += (f" if '{path.stem}' is a model of that script's registry (`--list` shows them), "
                 "or save it again from the model that wrote it")
    return hint + "."


def _damaged(path: Path, what: str) -> CheckpointError:
    return CheckpointError(f"The checkpoint '{path}' cannot be used: {what}. {regenerate_hint(path)}")


def diagnose(path: str | Path) -> str | None:
    """What is wrong with the bytes of a safetensors file, in plain words; None if its layout looks intact.

    A safetensors file is: 8 bytes giving the length N of a JSON header, the N-byte header (which
    names every tensor, its dtype, shape and byte range), then the tensors' bytes.
    """
    path = Path(path)
    size = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(8)
        if size < 8:
            return (f"it has only {size} bytes, too few to be a safetensors file "
                    "(it is empty or was cut short)")
        n_header = int.from_bytes(head, "little")
        first = f.read(1)
        if first != b"{":
            return (f"it is not a safetensors file: such a file starts with the length of a JSON description "
                    f"of its tensors, and this one starts with the bytes {(head + first)[:9]!r}")
        if 8 + n_header > size:
            return (f"it is cut short (truncated): its description of the tensors alone should take {n_header:,} "
                    f"bytes, but the whole file has only {size:,} bytes (an interrupted copy or download?)")
        try:
            header = json.loads(first + f.read(n_header - 1))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return "its description of the tensors (the JSON header) is garbled: the file is damaged"
    ends = [v["data_offsets"][1] for k, v in header.items()
            if k != "__metadata__" and isinstance(v, dict) and len(v.get("data_offsets", ())) == 2]
    need = 8 + n_header + max(ends, default=0)
    if need > size:
        return (f"it is cut short (truncated): its tensors need {need:,} bytes but the file has only "
                f"{size:,} (an interrupted copy or download?)")
    return None


def _read_error(path: Path, e: Exception) -> CheckpointError:
    what = diagnose(path) or f"the safetensors library could not read it ({e})"
    return _damaged(path, what)


def metadata(path: str | Path) -> dict[str, str]:
    """The strings stored with the weights: the config (JSON) and what tools/train_models.py recorded."""
    path = Path(path)
    try:
        with safe_open(str(path), framework="pt") as f:
            return dict(f.metadata() or {})
    except SafetensorError as e:
        raise _read_error(path, e) from None


def _flag(path: Path, value: str) -> bool:
    if value not in ("true", "false"):
        raise _damaged(path, f"its metadata says masked = {value!r}; expected 'true' or 'false'")
    return value == "true"


def stored_config(path: str | Path) -> Config:
    """The config a checkpoint was saved with. Files written before ``Config`` had a ``masked`` field
    carry it in the metadata ("masked": "true" / "false", from tools/train_models.py); it is honoured,
    so a model trained without the causal mask loads without it."""
    path = Path(path)
    meta = metadata(path)
    if "config" not in meta:
        raise ValueError(f"'{path}' has no stored config; use load_into(model, path) with a model you build.")
    try:
        fields = json.loads(meta["config"])
    except json.JSONDecodeError:
        raise _damaged(path, "its stored config is not valid JSON") from None
    if not isinstance(fields, dict):
        raise _damaged(path, f"its stored config is not a set of named fields: {meta['config'][:80]!r}")
    if "masked" not in fields and "masked" in meta:
        fields["masked"] = _flag(path, meta["masked"])
    unknown = sorted(set(fields) - {f.name for f in dataclasses.fields(Config)})
    if unknown:
        raise _damaged(path, f"its stored config has fields this code does not know: {', '.join(unknown)} "
                             "(written by another version of the series?)")
    try:
        return Config(**fields)
    except (TypeError, ValueError) as e:
        raise _damaged(path, f"its stored config is not valid: {e}") from None


def load(path: str | Path) -> Transformer:
    """Build a model from the config stored in the file (mask setting included), then load its weights.

    A damaged file (cut short, not a safetensors file at all, weights whose shapes disagree with the
    config stored beside them) raises ``CheckpointError`` (a ``ValueError``) saying so, with the
    command that regenerates it.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No checkpoint at '{path}'.")
    model = Transformer(stored_config(path))
    problems = _mismatches(model, _tensors(path))
    if problems:
        raise _damaged(path, "its weights do not have the shapes its own stored config gives (the file is damaged "
                             "or was written by other code):\n  " + "\n  ".join(problems) + "\n")
    return load_into(model, path)


def _tensors(path: Path) -> dict[str, torch.Tensor]:
    try:
        return load_file(str(path))
    except SafetensorError as e:
        raise _read_error(path, e) from None


def _mismatches(model: Transformer, tensors: dict[str, torch.Tensor]) -> list[str]:
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
    return problems


def load_into(model: Transformer, path: str | Path) -> Transformer:
    """Load weights into an existing model, saying exactly which tensors do not fit."""
    path = Path(path)
    tensors = _tensors(path)
    problems = _mismatches(model, tensors)
    if problems:
        raise ValueError(f"The checkpoint '{path}' does not fit this model's config:\n  " + "\n  ".join(problems))
    model.load_state_dict(tensors)
    return model


def checkpoints_dir() -> Path:
    """Where the trained models are: the repository's ``checkpoints/`` folder (written by
    ``tools/train_models.py``) when ``helpers`` runs from a clone (the editable install of run.sh and Binder),
    else the copy installed inside the package, ``helpers/checkpoints`` (pyproject.toml puts it there: a
    regular install such as Colab's ``pip install`` of the repository)."""
    clone = Path(__file__).resolve().parents[2]
    if (clone / "pyproject.toml").is_file() and (clone / "checkpoints").is_dir():
        return clone / "checkpoints"
    return Path(str(resources.files("helpers") / "checkpoints"))


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
                                f"`.venv/bin/python -m tools.train_models {name}` (GT_THREADS=1 on a shared machine).")
    return load(path), metadata(path)
