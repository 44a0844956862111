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
technique: every head, one at a time (at every position, or only at the positions that matter), and every
residual-stream state at every position.

Which positions to patch. A head's output patched at every position also gets its clean value where the two inputs
differ, so an early head that merely writes the changed token into the stream there restores part of the difference
(a later head moves that token to where the metric reads). Patched only where the metric reads (``positions=[-1]``),
a head restores something only if its own output there carries the difference. ``patch_heads`` uses the causal mask
to make that cheap: nothing before the first patched position changes, so only the columns from there on are
computed again (one column for the last position), every head of a layer in one pass (``_head_sweep``).
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
    if isinstance(positions, torch.Tensor):
        positions = positions.reshape(-1).tolist()
    if isinstance(positions, int) and not isinstance(positions, bool):
        positions = [positions]
    if isinstance(positions, bool) or not isinstance(positions, list | tuple | range):
        raise TypeError(f"positions is a position (an int, -1 the last) or a list of them, got {positions!r}")
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


def _two_runs(model: Transformer, clean, corrupted, metric: Metric, clean_keys=None, bad_keys=None):
    """Both inputs checked and run once: (clean tokens, corrupted tokens, the clean cache, the corrupted cache,
    metric(clean), metric(corrupted)); tokens as (batch, n). A cache holds every activation, or only ``*_keys`` and
    the logits (``Transformer.activations``: the rest never exists)."""
    clean_t, _ = batch_of_tokens(model, clean)
    bad_t, _ = batch_of_tokens(model, corrupted)
    if clean_t.shape != bad_t.shape:
        raise ValueError(f"the clean and corrupted inputs must have the same shape, got {tuple(clean_t.shape)} and "
                         f"{tuple(bad_t.shape)}: patching copies position i of one run into position i of the other")
    for t in (getattr(metric, "right", None), getattr(metric, "wrong", None)):
        if t is not None:
            check_token_id(model, t, "the metric's token id")

    def run(tokens, keys) -> dict:
        if keys is None:
            return model.run_with_cache(tokens)[1]
        return model.activations(tokens, [*keys, names.LOGITS])
    with torch.no_grad():
        clean_cache = run(clean_t, clean_keys)
        bad_cache = run(bad_t, bad_keys) if bad_keys is not None else {names.LOGITS: model(bad_t)}
    m_clean, m_bad = metric(clean_cache[names.LOGITS]), metric(bad_cache[names.LOGITS])
    if abs(m_clean - m_bad) < 1e-6 * max(1.0, abs(m_clean)):
        raise ValueError(f"the metric is the same on both inputs ({m_clean:.4g}): there is no difference for a "
                         f"patch to restore; choose a corrupted input (or a metric) that changes the answer")
    return clean_t, bad_t, clean_cache, bad_cache, m_clean, m_bad


def _fractions(model: Transformer, clean, corrupted, metric: Metric) -> tuple[Callable, int]:
    """Run the clean and corrupted inputs once; returns ``fraction(what, positions)``, the share of the clean metric
    that patching ``what`` into the corrupted run brings back (one forward pass each), and n, the number of tokens."""
    _, bad_t, cache, _, m_clean, m_bad = _two_runs(model, clean, corrupted, metric)

    @torch.no_grad()
    def fraction(what, positions=None) -> float:
        with patched(model, cache, what, positions):
            return (metric(model(bad_t)) - m_bad) / (m_clean - m_bad)
    return fraction, bad_t.shape[-1]


def restored(model: Transformer, clean, corrupted, what: str | Sequence[str], metric: Metric,
             positions: int | Sequence[int] | None = None, hold: str | Sequence[str] = ()) -> float:
    """The fraction of the clean metric that patching ``what`` (at ``positions``) from the clean run into the
    corrupted one brings back: (patched - corrupted) / (clean - corrupted).

    ``hold``: activations (named as ``what``) kept at their values in the corrupted run, at the same positions, so
    that the patched ones reach the logits only by the other paths. With a one-layer model's heads as ``what`` and
    its MLP's neurons as ``hold``, the heads' outputs count only through their direct path to the logits, not
    through what they change in the MLP's input. A unit may not be in both."""
    hold = [hold] if isinstance(hold, str) else list(hold)
    if not hold:
        fraction, _ = _fractions(model, clean, corrupted, metric)
        return fraction(what, positions)
    what = [what] if isinstance(what, str) else list(what)
    both = {parse(model, w) for w in what} & {parse(model, h) for h in hold}
    if both:
        raise ValueError(f"{', '.join(sorted(map(str, both)))} is both patched (what) and held (hold): "
                         f"an activation is either copied from the clean run or kept from the corrupted one")
    _, bad_t, clean_cache, _, m_clean, m_bad = _two_runs(model, clean, corrupted, metric)
    with torch.no_grad():
        _, bad_cache = model.run_with_cache(bad_t)
        with patched(model, clean_cache, what, positions), patched(model, bad_cache, hold, positions):
            return (metric(model(bad_t)) - m_bad) / (m_clean - m_bad)


def patch_heads(model: Transformer, clean, corrupted, metric: Metric,
                positions: int | Sequence[int] | None = None) -> torch.Tensor:
    """Each head's output o^h patched alone from the clean run into the corrupted one, at ``positions`` (default
    every one; -1 is the last): (n_layers, n_heads) fractions restored. The picture of "which heads carry the
    difference".

    clean, corrupted: token ids (n,) or (batch, n), the same shape; metric: logits (batch, n_vocab, n) -> a number.
    Entry [L, h] is ``restored(model, clean, corrupted, names.head(L, h), metric, positions)``, up to float rounding,
    computed in about n_layers passes instead of n_layers x n_heads (``_head_sweep`` says how). With an intervention
    already in force around the call, or the causal mask off, it takes the long way: one full pass per head."""
    if not _causal_and_unhooked(model) or model.cfg.n_layers == 0:
        fraction, _ = _fractions(model, clean, corrupted, metric)
        return torch.tensor([[fraction(names.head(layer, h), positions) for h in range(model.cfg.n_heads)]
                             for layer in range(model.cfg.n_layers)])
    return _head_sweep(model, clean, corrupted, metric, positions)


def _causal_and_unhooked(model: Transformer) -> bool:
    """True when every layer has its causal mask on and no function is attached to any hook point: then a patch at
    positions p >= p0 changes nothing at the positions before p0 (no query there reads a later key), and the rest of
    the model computes exactly the corrupted run."""
    check_model(model)
    return all(b.attn.masked for b in model.blocks) and not any(p.fns for p in model.hook_points.values())


LOGITS_BYTES_PER_PASS = 64 * 2 ** 20  # the logits one pass of the sweep may hold (GPT-2 Small, 4 texts: 12 heads
                                      # patched at the last position in one pass, 9.6 MB; at all 39, 2 at a time)


@torch.no_grad()
def _head_sweep(model: Transformer, clean, corrupted, metric: Metric, positions) -> torch.Tensor:
    """``patch_heads`` in n_layers passes (more when the logits would not fit in ``LOGITS_BYTES_PER_PASS``), each
    over the columns from p0, the first patched position, on:

    * the corrupted run once, its stream and its keys and values kept. Whichever head of layer L is patched, every
      activation before layer L is the corrupted run's, so the pass for layer L starts from the stream entering
      block L (x_2L in a model with MLPs);
    * the causal mask keeps every position before p0 as the corrupted run had it (no query i < p0 reads a key
      j >= p0), so only the columns p0 ... n-1 are computed again; their queries read the earlier positions' keys
      and values from the corrupted run's cache, and the earlier positions' logits are its logits. Patching at
      the last position computes one column;
    * every head of layer L in one pass: the rerun columns are repeated once per head, side by side (copy c holds
      the columns for head c's patch, o^c taken from the clean run), and each copy's queries read only the earlier
      positions and its own copy's columns (a mask on S, the scores), so the copies cannot see each other."""
    H, V, n_layers = model.cfg.n_heads, model.cfg.n_vocab, model.cfg.n_layers
    entering = [model.stream_into(layer) for layer in range(n_layers)]            # x_i entering block L
    o_keys = [names.key(layer, "o_heads") for layer in range(n_layers)]
    kv_keys = [names.key(layer, kind) for layer in range(n_layers) for kind in ("k", "v")]
    _, bad_t, clean_cache, bad, m_clean, m_bad = _two_runs(
        model, clean, corrupted, metric, clean_keys=o_keys, bad_keys=kv_keys + entering)
    B, n = bad_t.shape
    pos = _positions(n, positions)
    p0 = min(pos)
    m = n - p0                                                                    # columns computed again
    cols = torch.tensor(pos) - p0                                                 # the patched ones among them
    full = bad[names.LOGITS].clone()                                              # (B, n_vocab, n) for the metric
    per_pass = max(1, min(H, LOGITS_BYTES_PER_PASS // (4 * B * V * m)))
    out = torch.empty(n_layers, H)
    for layer in range(n_layers):
        clean_o = clean_cache[o_keys[layer]][..., pos]                            # (B, n_heads, d_model, patched)
        for first in range(0, H, per_pass):
            heads = list(range(first, min(H, first + per_pass)))
            c = len(heads)

            def patch(o: torch.Tensor) -> torch.Tensor:                           # (B, n_heads, d_model, c m)
                o = o.clone()
                for j, h in enumerate(heads):                                     # copy j: head h's clean o^h
                    o[:, h, :, j * m + cols] = clean_o[:, h]
                return o
            edits: dict[str, Callable] = {o_keys[layer]: patch}
            for later in range(layer, n_layers):
                edits[names.key(later, "S")] = _copies_apart(p0, m, c)
                if p0:
                    for kind in ("k", "v"):
                        edits[names.key(later, kind)] = _after(bad[names.key(later, kind)][..., :p0])
            x = bad[entering[layer]][..., p0:].repeat(1, 1, c)                   # (B, d_model, c m)
            with hooked(model, edits):
                logits = model.run_from(layer, x)                                 # (B, n_vocab, c m)
            for j, h in enumerate(heads):
                full[..., p0:] = logits[..., j * m:(j + 1) * m]
                out[layer, h] = (metric(full) - m_bad) / (m_clean - m_bad)
    return out


def _after(past: torch.Tensor) -> Callable:
    """An edit of a layer's k or v, computed for the rerun columns only: the corrupted run's values at the positions
    before them, ``past`` (batch, n_heads, d_head, p0), put in front."""
    def prepend(t: torch.Tensor) -> torch.Tensor:                                 # (B, n_heads, d_head, c m)
        return torch.cat([past, t], dim=-1)                                       # -> (B, n_heads, d_head, p0 + c m)
    return prepend


def _copies_apart(p0: int, m: int, copies: int) -> Callable:
    """An edit of the scores S (batch, n_heads, c m, p0 + c m) of ``copies`` copies of m columns side by side after
    p0 earlier positions: each query keeps the earlier positions and its own copy's columns up to itself (the
    causal mask, applied already), and every other copy's columns get -inf (weight 0)."""
    copy = torch.arange(copies).repeat_interleave(m)                              # (c m,) the copy of each column
    other = torch.cat([torch.zeros(copies * m, p0, dtype=torch.bool), copy[:, None] != copy[None, :]], dim=1)

    def apart(S: torch.Tensor) -> torch.Tensor:
        return S.masked_fill(other, float("-inf"))
    return apart


def patch_resid(model: Transformer, clean, corrupted, metric: Metric) -> torch.Tensor:
    """Each residual-stream state x_i patched at one position p at a time: (number of states, n) fractions
    restored, row i = x_i, column p = position p. The picture of "where the difference travels": at x0 only
    the positions where the inputs differ matter; by the last state only the position the metric reads."""
    fraction, n = _fractions(model, clean, corrupted, metric)
    return torch.tensor([[fraction(name, [p]) for p in range(n)] for name in model.resid_names()])
