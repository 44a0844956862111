"""Notebook 08's ladder: which trained Transformer is each rung, and how to read a rung's seeds.

The post's "Summing up" names the pieces of a Transformer — embedding, attention, MLP, LayerNorm, more
blocks — and says of LayerNorm only that it "seems to speed up training". The ladder measures what each
piece buys by training one model per rung with ONE recipe (the same data, width, context, heads, steps,
learning rate and initialisation) and three seeds, so that a difference between rungs is larger than the
difference between two seeds of one rung before anyone reads it. Two rungs isolate LayerNorm: attention with
and without it, and attention + MLP with and without it.

``tools/train_models.py`` trains every (rung, seed) listed here into checkpoints/; this module only names
them and loads them. Seed 0 of "zero", "full1" and "full2" *is* the checkpoint of that name used by notebooks
02, 06 and 07 (the same recipe and seed: stored once).

The "long" runs are the depth experiment: the one-layer and two-layer full models of the ladder trained four
times longer (8,000 steps, everything else the same), three seeds each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from helpers.model import checkpoint
from helpers.model.transformer import Transformer

SEEDS = (0, 1, 2)
STEPS, LONG_STEPS = 2000, 8000
LR = 3e-3  # AdamW, constant; initial weights (W_pos included) with std 0.02; batches of 32 windows of 32 tokens
EVAL_EVERY = 250  # steps between the held-out measurements recorded in each checkpoint's "heldout_curve"


@dataclass(frozen=True)
class Rung:
    name: str  # part of the checkpoint name
    label: str  # what the notebook calls it
    config: dict  # Config fields other than n_vocab


_WIDE = dict(d_model=64, n_ctx=32)
RUNGS: dict[str, Rung] = {r.name: r for r in (
    Rung("zero", "zero-layer", dict(_WIDE, n_layers=0)),
    Rung("attn", "attention", dict(_WIDE, n_layers=1, n_heads=4)),
    Rung("attn_ln", "attention + LN", dict(_WIDE, n_layers=1, n_heads=4, layernorm=True)),
    Rung("attn_mlp", "attention + MLP", dict(_WIDE, n_layers=1, n_heads=4, d_mlp=256)),
    Rung("full1", "attention + MLP + LN", dict(_WIDE, n_layers=1, n_heads=4, d_mlp=256, layernorm=True)),
    Rung("full2", "2 full layers", dict(_WIDE, n_layers=2, n_heads=4, d_mlp=256, layernorm=True)),
)}
SHARED = ("zero", "full1", "full2")  # rungs whose seed 0 is the shipped checkpoint of the same name
LONG = ("full1", "full2")  # the rungs trained LONG_STEPS for the depth experiment


def _check(rung: str, seed: int, rungs=RUNGS) -> None:
    if rung not in rungs:
        raise KeyError(f"no ladder rung {rung!r}: the rungs are {list(rungs)}")
    if seed not in SEEDS:
        raise KeyError(f"the ladder has seeds {SEEDS}, not {seed!r}")


def checkpoint_name(rung: str, seed: int) -> str:
    """The checkpoint of ``rung`` trained with ``seed`` (e.g. "ladder_attn_s1"; seed 0 of a shared rung: "full1")."""
    _check(rung, seed)
    return rung if seed == 0 and rung in SHARED else f"ladder_{rung}_s{seed}"


def long_name(rung: str, seed: int) -> str:
    """The checkpoint of ``rung`` trained LONG_STEPS with ``seed`` (e.g. "long_full2_s0")."""
    _check(rung, seed, {r: RUNGS[r] for r in LONG})
    return f"long_{rung}_s{seed}"


def all_names() -> dict[str, tuple[str, int, int]]:
    """Every checkpoint of the ladder and the depth experiment: name -> (rung, seed, steps)."""
    names = {checkpoint_name(r, s): (r, s, STEPS) for r in RUNGS for s in SEEDS}
    names.update({long_name(r, s): (r, s, LONG_STEPS) for r in LONG for s in SEEDS})
    return names


def load_rung(rung: str, long: bool = False) -> list[tuple[Transformer, dict[str, str]]]:
    """Every seed of one rung, in SEEDS order: [(model, metadata), ...]."""
    name = long_name if long else checkpoint_name
    return [checkpoint.load_named(name(rung, seed)) for seed in SEEDS]


def heldout_curve(meta: dict[str, str]) -> list[float]:
    """The held-out losses train_models.py recorded every EVAL_EVERY steps (the held-out set, helpers.data)."""
    return [float(v) for v in json.loads(meta["heldout_curve"])]
