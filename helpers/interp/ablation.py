"""Ablation: run the model with some attention heads or MLP neurons switched off, and see what changes.

The post's model writes into the residual stream by addition (x1 = x0 + sum_h o^h, x2 = x1 + m), so a
head can be removed by replacing its output o^h (d_model, n) before the sum, and a hidden neuron of
the MLP by replacing its activation z_i before m = W_2 z + b_2. Two replacements
("A Mathematical Framework for Transformer Circuits" and most interpretability work use both):

* zero ablation   o^h := 0, z_i := 0 — as if the head or neuron did not exist;
* mean ablation   o^h := the mean of o^h, z_i := the mean of z_i, taken over a stated reference set:
                  every text of ``reference`` (batch, n) and the positions ``positions`` of each
                  (None = every position), or one mean per position (``per_position``: over the texts
                  only, for texts of the reference's length). It keeps the average the later layers
                  are used to, and removes only what depends on this input.

Means come from a clean run of ``reference`` (nothing ablated). Inside ``with ablated(...)`` the cache
of ``run_with_cache`` holds the edited o_heads, o, z and m (q, k, v, S, A and r are unchanged: the
head still computes its pattern, its output is what is replaced). Nothing is copied: a function is attached to
the hook points "L{layer}.o_heads" and "L{layer}.z" (``helpers.model.hooks``) and taken off again when the
``with`` block ends, even when it raises, so the model is exactly as before afterwards.

    with ablated(model, heads=[(0, 2)]):                 # zero layer 0, head 2
        p = model.next_token_probs(ids)
    with ablated(model, neurons=[(0, 17)], how="mean", reference=windows):
        loss = per_position_loss(model, windows).mean()
    means = mean_activations(model, windows, heads=[(0, 2), (1, 0)])   # one clean run, for several ablations
    with ablated(model, heads=[(0, 2)], how="mean", means=means):
        ...
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import torch

from helpers.interp.validate import batch_of_tokens, check_head, check_neuron
from helpers.model import names
from helpers.model.hooks import hooked, suspended
from helpers.model.transformer import Transformer

Unit = tuple[int, int]  # (layer, head) or (layer, neuron)


def _pairs(units) -> list:
    """[(layer, i), ...], or one (layer, i) tuple given without a list around it -> a list of pairs."""
    if isinstance(units, tuple) and len(units) == 2 and all(isinstance(u, int) for u in units):
        return [units]
    return list(units)


def _units(units, check, model: Transformer) -> dict[int, list[int]]:
    """[(layer, i), ...] (or one pair) -> {layer: [i, ...]}, every pair checked."""
    by_layer: dict[int, list[int]] = {}
    for unit in _pairs(units):
        if not isinstance(unit, tuple | list) or len(unit) != 2:
            raise TypeError(f"give heads and neurons as (layer, index) pairs, got {unit!r}")
        layer, i = check(model, *unit)
        if i not in by_layer.setdefault(layer, []):
            by_layer[layer].append(i)
    return by_layer


def _positions(n: int, positions) -> torch.Tensor:
    if positions is None:
        return torch.arange(n)
    idx = torch.arange(n)[positions] if isinstance(positions, slice) else torch.as_tensor(list(positions)).long()
    if idx.numel() == 0:
        raise ValueError("positions selects no position: the mean would be over nothing")
    if int(idx.min()) < -n or int(idx.max()) >= n:
        raise ValueError(f"positions {idx.tolist()} go outside the reference texts "
                         f"(n = {n} tokens, positions 0 ... {n - 1})")
    return idx % n


@torch.no_grad()
def mean_activations(model: Transformer, reference, heads: Iterable[Unit] = (), neurons: Iterable[Unit] = (),
                     positions: slice | Sequence[int] | None = None,
                     per_position: bool = False) -> dict[tuple[str, int, int], torch.Tensor]:
    """Means over a stated reference set: every text of ``reference`` (batch, n) token ids and the
    ``positions`` of each (None: every position; a slice or a list of positions counted from 0).

    Returns {("head", layer, h): mean o^h (d_model,), ("neuron", layer, i): mean z_i ()}. With per_position=True the
    mean is over the texts only, one for each position: o^h (d_model, n) and z_i (n,), for ablating texts of length n
    (or shorter) position by position (a head's average output at the start of a text need not be its average at the
    end). ``reference`` may also be a list of texts of different lengths (each (n_k,)): the mean is then over every
    position of every text, each text run alone."""
    if isinstance(reference, list | tuple) and reference and all(
            isinstance(r, torch.Tensor) and r.dim() == 1 for r in reference):
        if per_position or positions is not None:
            raise ValueError("texts of different lengths have no position in common: take their means over every "
                             "position (per_position=False, positions=None), or give texts of one length (batch, n)")
        parts = [(mean_activations(model, r[None], heads, neurons), r.numel()) for r in reference]
        total = sum(n for _, n in parts)
        return {k: sum(m[k] * (n / total) for m, n in parts) for k in parts[0][0]}
    head_units, neuron_units = _units(heads, check_head, model), _units(neurons, check_neuron, model)
    ref, _ = batch_of_tokens(model, reference)
    if per_position and positions is not None:
        raise ValueError("per_position=True takes a mean at every position: leave positions out")
    pos = _positions(ref.shape[-1], positions)
    over = (0,) if per_position else (0, -1)  # over the texts, or over the texts and the positions
    with suspended(model):  # a clean run, even when called inside another ablation
        cache = model.activations(ref, [names.key(layer, "o_heads") for layer in head_units]
                                  + [names.key(layer, "z") for layer in neuron_units])
    out = {}
    for layer, hs in head_units.items():
        o_heads = cache[names.key(layer, "o_heads")][..., pos]  # (batch, n_heads, d_model, positions)
        for h in hs:
            out["head", layer, h] = o_heads[:, h].mean(dim=over)  # (d_model,), or (d_model, n) per position
    for layer, idx in neuron_units.items():
        z = cache[names.key(layer, "z")][..., pos]  # (batch, d_mlp, positions)
        for i in idx:
            out["neuron", layer, i] = z[:, i].mean(dim=over)  # (), or (n,) per position
    return out


def fits(values: torch.Tensor, n: int, per_position_dims: int) -> torch.Tensor:
    """Replacements made as wide as a text of n tokens: pooled over positions (one value for every position: a
    dimension of 1 is added), or taken per position (``per_position_dims`` dimensions, the last one a position), of
    which the text's n positions take the first n (position i of the text gets the mean at position i: a text of
    n - 1 tokens, as ``per_position_loss`` runs, fits the means of texts of n)."""
    if values.dim() < per_position_dims:
        return values[..., None]
    if values.shape[-1] < n:
        raise ValueError(f"these means were taken per position over texts of n = {values.shape[-1]} tokens, and the "
                         f"text ablated has n = {n}: positions {values.shape[-1]} and later have no mean. Take them "
                         "over texts at least as long, or pooled over the positions (per_position=False)")
    return values[..., :n]


def _replace_heads(idx: list[int], values: torch.Tensor):
    """o_heads (..., n_heads, d_model, n): heads idx get values (len(idx), d_model) at every position, or
    (len(idx), d_model, n), one per position."""
    def edit(o_heads: torch.Tensor) -> torch.Tensor:
        out = o_heads.clone()
        out[..., idx, :, :] = fits(values, o_heads.shape[-1], 3).to(out.dtype)
        return out
    return edit


def _replace_neurons(idx: list[int], values: torch.Tensor):
    """z (..., d_mlp, n): neurons idx get values (len(idx),) at every position, or (len(idx), n), one per position."""
    def edit(z: torch.Tensor) -> torch.Tensor:
        out = z.clone()
        out[..., idx, :] = fits(values, z.shape[-1], 2).to(out.dtype)
        return out
    return edit


def given_means(means, units: list[tuple[str, int, int]], reference, positions) -> dict:
    """The means of a mean ablation handed in already computed (``mean_activations``'s answer), checked:
    given instead of reference texts, and holding every unit ablated."""
    if reference is not None or positions is not None:
        raise ValueError("give the reference texts (and positions) or means computed from them, not both")
    if not isinstance(means, dict):
        raise TypeError(f"means must be the dict mean_activations returns, got {type(means).__name__}")
    missing = [u for u in units if u not in means]
    if missing:
        raise ValueError(f"means holds no mean for {', '.join(f'{k} {layer}.{i}' for k, layer, i in missing)}: "
                         "compute it with mean_activations(model, reference, heads=..., neurons=...) "
                         "for every unit ablated")
    return means


@contextmanager
def ablated(model: Transformer, heads: Iterable[Unit] = (), neurons: Iterable[Unit] = (), how: str = "zero",
            reference=None, positions: slice | Sequence[int] | None = None,
            means: dict | None = None) -> Iterator[Transformer]:
    """Inside the ``with`` block, ``model`` runs with the given heads and MLP neurons ablated.

    heads:      (layer, head) pairs, e.g. [(0, 2), (1, 3)] (one pair may be given alone: (0, 2))
    neurons:    (layer, neuron) pairs: hidden neurons z_i of that layer's MLP
    how:        "zero" (o^h := 0, z_i := 0) or "mean" (the mean over ``reference`` and ``positions``,
                see ``mean_activations``; ``reference`` (batch, n) token ids is then required)
    means:      instead of ``reference``, the answer of ``mean_activations`` for these units, computed once
                and reused by several ablations (each ``reference`` costs one clean forward pass)

    Every pair is checked before anything changes; afterwards (even after an exception inside the
    block) the model is exactly as before. Blocks nest: an inner one ablates in addition.
    """
    if how not in ("zero", "mean"):
        raise ValueError(f"how must be 'zero' or 'mean', got {how!r}")
    heads, neurons = _pairs(heads), _pairs(neurons)
    head_units, neuron_units = _units(heads, check_head, model), _units(neurons, check_neuron, model)
    if how == "mean" and means is not None:
        means = given_means(means, [("head", layer, h) for layer, hs in head_units.items() for h in hs]
                            + [("neuron", layer, i) for layer, idx in neuron_units.items() for i in idx],
                            reference, positions)
    elif how == "mean":
        if reference is None:
            raise ValueError("mean ablation needs reference texts: ablated(..., how='mean', reference=tokens "
                             "(batch, n)) — the mean of each output is taken over them")
        means = mean_activations(model, reference, heads, neurons, positions)
    elif means is not None:
        raise ValueError("means are the values of a mean ablation; with how='zero' leave them out")
    elif reference is not None or positions is not None:
        raise ValueError("reference and positions set the mean of a mean ablation; with how='zero' leave them out")
    edits = {}
    for layer, hs in head_units.items():
        values = (torch.stack([means["head", layer, h] for h in hs]) if how == "mean"
                  else torch.zeros(len(hs), model.cfg.d_model))
        edits[names.key(layer, "o_heads")] = _replace_heads(hs, values)
    for layer, idx in neuron_units.items():
        values = torch.stack([means["neuron", layer, i] for i in idx]) if how == "mean" else torch.zeros(len(idx))
        edits[names.key(layer, "z")] = _replace_neurons(idx, values)
    with hooked(model, edits):
        yield model
