"""Activation patching: run the model on a corrupted input with one activation copied in from a run on the clean
input, and measure how much of the clean behaviour comes back.

Ablation (``ablation.py``) asks "what breaks without this?"; patching asks "is this enough to carry the difference
between two inputs?". Take two prompts of the same length that differ where it matters — *and the children of*
with its last word changed, or a repeated sequence whose first half is shuffled — and a metric of the output
that tells them apart, usually a logit difference. Run the corrupted prompt, but with one activation (a head's
output o^h, hidden neurons z_j of an MLP, or the residual stream x_i itself) replaced, at some positions, by its
value in the clean run. Then

    restored = (metric(patched) - metric(corrupted)) / (metric(clean) - metric(corrupted))

is 1 when that activation alone carries all of the clean behaviour, 0 when it carries none (and can be below 0
or above 1). This is the "denoising" direction of the technique as ARENA's and TransformerLens's tutorials
describe it ("How to use and interpret activation patching", Heimersheim and Nanda, 2024).

What can be patched, by name (``helpers.model.names``):

    "L0.h2"    head 2 of layer 0: its output o^h (d_model, n), before the heads are summed
    "L1.n17"   hidden neuron 17 of layer 1's MLP: z_17 (one number per position), before W_2
    "x2"       the residual stream x2 itself (d_model, n): everything later is recomputed from it

    with patched(model, clean_cache, ["L0.h2"], positions=[-1]):
        logits = model(corrupted)

Inside the block the cache of ``run_with_cache`` holds the patched values. Afterwards the model is exactly as
before, even when the block raises. The sweeps ``patch_heads`` and ``patch_resid`` give the pictures of the
technique: every head at once (at every position), and every residual-stream state at every position.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import torch

from helpers.interp.validate import batch_of_tokens, check_head, check_model, check_neuron, check_position, \
    check_token_id
from helpers.model import names
from helpers.model.hooks import Cache, hooked
from helpers.model.transformer import Transformer

Metric = Callable[[torch.Tensor], float]   # logits (n_vocab, n) or (batch, n_vocab, n) -> one number

NAMES_HELP = ("'L0.h2' (head 2 of layer 0: its output o^h), 'L1.n17' (hidden neuron 17 of layer 1's MLP: z_17) "
              "or 'x2' (the residual stream x2)")


def parse(model: Transformer, name: str) -> tuple[str, int, int]:
    """A patchable activation's name -> ("head", layer, h), ("neuron", layer, j) or ("resid", i, 0), checked
    against the model (a head, a neuron or a state it does not have gets a message saying what it has)."""
    check_model(model)
    if not isinstance(name, str):
        raise TypeError(f"name the activation to patch as a string: {NAMES_HELP}; got {name!r}")
    if m := re.fullmatch(r"L(\d+)\.h(\d+)", name):
        return ("head", *check_head(model, int(m[1]), int(m[2])))
    if m := re.fullmatch(r"L(\d+)\.n(\d+)", name):
        return ("neuron", *check_neuron(model, int(m[1]), int(m[2])))
    if names.is_resid(name):
        i, last = names.resid_index(name), len(model.resid_names()) - 1
        if i > last:
            raise ValueError(f"this model's residual stream has states x0 ... x{last}, not {name}: x0 is the "
                             f"embedding and every attention layer and MLP adds one")
        return ("resid", i, 0)
    raise ValueError(f"no activation called {name!r} can be patched; name one as {NAMES_HELP}")


def resid_places(model: Transformer) -> list[tuple[int, str]]:
    """Where each residual-stream state x0, x1, ... is written: (-1, "embed") for x0, then (block, "attn") and
    (block, "mlp") in order, as the model numbers them."""
    places = [(-1, "embed")]
    for layer, block in enumerate(model.blocks):
        places.append((layer, "attn"))
        if block.mlp is not None:
            places.append((layer, "mlp"))
    return places


def _positions(n: int, positions) -> list[int]:
    if positions is None:
        return list(range(n))
    if isinstance(positions, int) and not isinstance(positions, bool):
        positions = [positions]
    idx = [check_position(n, p) for p in positions]
    if not idx:
        raise ValueError("positions selects no position: nothing would be patched")
    return idx


def _source(cache: Cache, key: str, like: torch.Tensor) -> torch.Tensor:
    """The clean value of ``key`` shaped like the running tensor ``like`` (which always has a batch axis)."""
    src = cache[key]
    if src.dim() == like.dim() - 1:
        src = src[None]
    if src.shape != like.shape:
        raise ValueError(f"the clean run's {key} has shape {tuple(src.shape)} but this run's has "
                         f"{tuple(like.shape)}: patching copies position i of one run into position i of the "
                         f"other, so both inputs need the same number of tokens (and texts)")
    return src.to(like.dtype)


def _copy(cache: Cache, key: str, pos: list[int], units: list[int] | None = None):
    """An edit that takes the clean value of ``key`` at positions ``pos`` (the last axis) and, when ``units`` is
    given, only for those heads or neurons (the axis that counts them: o_heads' -3, z's -2)."""
    def edit(t: torch.Tensor) -> torch.Tensor:
        src = _source(cache, key, t)
        where = torch.zeros(t.shape[-1], dtype=torch.bool)
        where[pos] = True
        if units is not None:
            axis = -3 if t.dim() == 4 else -2
            which = torch.zeros(t.shape[axis], dtype=torch.bool)
            which[units] = True
            shape = [1] * t.dim()
            shape[axis] = t.shape[axis]
            where = which.view(shape) & where
        return torch.where(where, src, t)
    return edit


@contextmanager
def patched(model: Transformer, source: Cache, what: str | Sequence[str],
            positions: int | Sequence[int] | None = None) -> Iterator[Transformer]:
    """Inside the ``with`` block, every activation named in ``what`` (see the module's text) is replaced, at
    ``positions`` (None: every position; counted from 0, -1 is the last), by its value in ``source``, the cache
    of ``model.run_with_cache`` on the clean input. The input run inside the block must have the same shape."""
    what = [what] if isinstance(what, str) else list(what) if isinstance(what, list | tuple) else [what]
    if not what:
        raise ValueError(f"name at least one activation to patch: {NAMES_HELP}")
    if not isinstance(source, dict) or names.TOKENS not in source:
        raise TypeError("source must be the cache of a clean run: `_, clean_cache = model.run_with_cache(clean)`")
    n = source[names.TOKENS].shape[-1]
    pos = _positions(n, positions)
    edits: dict[str, Callable] = {}
    heads: dict[int, list[int]] = {}
    neurons: dict[int, list[int]] = {}
    for kind, a, b in (parse(model, w) for w in what):
        if kind == "head":
            heads.setdefault(a, []).append(b)
        elif kind == "neuron":
            neurons.setdefault(a, []).append(b)
        else:
            edits[names.resid(a)] = _copy(source, names.resid(a), pos)              # x_i (batch, d_model, n)
    for layer, hs in heads.items():
        key = names.key(layer, "o_heads")                                            # (batch, n_heads, d_model, n)
        edits[key] = _copy(source, key, pos, hs)
    for layer, js in neurons.items():
        key = names.key(layer, "z")                                                  # (batch, d_mlp, n)
        edits[key] = _copy(source, key, pos, js)
    with hooked(model, edits):
        yield model


def logit_difference(right: int, wrong: int, position: int = -1) -> Metric:
    """The metric most patching uses: logit(right) - logit(wrong) at ``position`` (mean over a batch)."""
    def metric(logits: torch.Tensor) -> float:
        at = logits[..., check_position(logits.shape[-1], position)]   # (n_vocab,) or (batch, n_vocab)
        return float((at[..., right] - at[..., wrong]).mean().detach())
    metric.right, metric.wrong = right, wrong
    return metric


def _fractions(model: Transformer, clean, corrupted, metric: Metric) -> tuple[Callable, int]:
    """Run the clean and corrupted inputs once; returns ``fraction(what, positions)``, the share of the clean metric
    that patching ``what`` into the corrupted run brings back, and n, the number of tokens."""
    clean_t, _ = batch_of_tokens(model, clean)
    bad_t, _ = batch_of_tokens(model, corrupted)
    if clean_t.shape != bad_t.shape:
        raise ValueError(f"the clean and corrupted inputs must have the same shape, got {tuple(clean_t.shape)} and "
                         f"{tuple(bad_t.shape)}: patching copies position i of one run into position i of the other")
    for t in (getattr(metric, "right", None), getattr(metric, "wrong", None)):
        if t is not None:
            check_token_id(model, t, "the metric's token id")
    with torch.no_grad():
        clean_logits, cache = model.run_with_cache(clean_t)
        m_clean, m_bad = metric(clean_logits), metric(model(bad_t))
    if abs(m_clean - m_bad) < 1e-6 * max(1.0, abs(m_clean)):
        raise ValueError(f"the metric is the same on both inputs ({m_clean:.4g}): there is no difference for a "
                         f"patch to restore; choose a corrupted input (or a metric) that changes the answer")

    @torch.no_grad()
    def fraction(what, positions=None) -> float:
        with patched(model, cache, what, positions):
            return (metric(model(bad_t)) - m_bad) / (m_clean - m_bad)
    return fraction, bad_t.shape[-1]


def restored(model: Transformer, clean, corrupted, what: str | Sequence[str], metric: Metric,
             positions: int | Sequence[int] | None = None) -> float:
    """The fraction of the clean metric that patching ``what`` (at ``positions``) from the clean run into the
    corrupted one brings back: (patched - corrupted) / (clean - corrupted)."""
    fraction, _ = _fractions(model, clean, corrupted, metric)
    return fraction(what, positions)


def patch_heads(model: Transformer, clean, corrupted, metric: Metric,
                positions: int | Sequence[int] | None = None) -> torch.Tensor:
    """Each head's output patched alone (at ``positions``, default every one): (n_layers, n_heads) fractions
    restored. The picture of "which heads carry the difference"."""
    fraction, _ = _fractions(model, clean, corrupted, metric)
    return torch.tensor([[fraction(names.head(layer, h), positions) for h in range(model.cfg.n_heads)]
                         for layer in range(model.cfg.n_layers)])


def patch_resid(model: Transformer, clean, corrupted, metric: Metric) -> torch.Tensor:
    """Each residual-stream state x_i patched at one position p at a time: (number of states, n) fractions
    restored, row i = x_i, column p = position p. The picture of "where the difference travels": at x0 only
    the positions where the inputs differ matter; by the last state only the position the metric reads."""
    fraction, n = _fractions(model, clean, corrupted, metric)
    return torch.tensor([[fraction(name, [p]) for p in range(n)] for name in model.resid_names()])
