"""Hook points: one named place per activation, through which the cache and every intervention pass.

The model's code calls a hook point on each activation the post names, ``q = hook("q", W_Q @ x)``: the identity
until a function is attached to it. Attached functions see the activation and may return a replacement (an
intervention) or None (a reader, such as the cache). This is the plumbing of the model; the model's files hold the
post's equations. TransformerLens's ``HookPoint`` is the model for this ("blocks.0.attn.hook_pattern"); here a point
is called by the post's name, the cache key of ``helpers.model.names``.

    with hooked(model, {"L0.o_heads": zero_head_2}):      # an edit: return the new value
        logits = model(tokens)
    with hooked(model, {"L1.A": seen.append}):            # a reader: return None
        model(tokens)

Two kinds of point:

* **activations** "t", "x0", "x1", ..., "L0.q" ... "L0.o", "L0.z", "L0.m", "logits": what the cache holds;
* **reads** "L1.x_q", "L1.x_k", "L1.x_v", "L1.x_mlp" and "x_final": the residual stream as one reader of it sees it
  (layer 1's queries, keys, values or MLP; the final LayerNorm and unembedding), before that reader's LayerNorm. They
  equal the stream itself and are not cached; path-specific ablation edits them (``helpers.interp.paths``).

Functions attached to one point run in the order they were attached (an enclosing ``with`` block's first), and the
cache is attached last, so it holds what the model computed with every edit in force.
"""

from __future__ import annotations

from collections.abc import Callable, ItemsView, Iterable, Iterator, KeysView, ValuesView
from contextlib import contextmanager

import torch

from helpers.model import names
from helpers.softmax import softmax

HookFn = Callable[[torch.Tensor], "torch.Tensor | None"]


class HookPoint:
    """The identity on one activation, unless functions are attached (``hooked``); costs one check when none is."""

    __slots__ = ("name", "fns", "cached")

    def __init__(self, name: str, cached: bool = True):
        self.name = name  # the post's name: "L0.A", "x2", "L1.x_k"
        self.fns: list[HookFn] = []
        self.cached = cached  # an activation the cache holds (False: a reader's view of the stream)

    def __call__(self, t: torch.Tensor) -> torch.Tensor:
        for fn in self.fns:
            out = fn(t)
            if out is not None:
                t = out
        return t

    def __repr__(self) -> str:
        return f"HookPoint({self.name!r}, {len(self.fns)} attached)"


def as_is(name: str, t: torch.Tensor) -> torch.Tensor:
    """The default ``hook`` of the pure functions ``attention`` and ``mlp``: every activation left as it is."""
    return t


def name_points(model) -> dict[str, HookPoint]:
    """Every hook point by its name, in the order a forward pass reaches them; the states the blocks write are
    numbered here, x1, x2, ..., one after every residual add."""
    table, i = {}, 0
    for point in (model.hooks["t"], model.hooks["x0"]):
        table[point.name] = point
    for block in model.blocks:
        has_mlp = block.mlp is not None
        for name in ("x_q", "x_k", "x_v"):
            table[block.hooks[name].name] = block.hooks[name]
        table.update((p.name, p) for p in block.attn.hooks.values())
        i += 1
        block.hooks["resid_mid"].name = names.resid(i)
        table[names.resid(i)] = block.hooks["resid_mid"]
        if has_mlp:
            table[block.hooks["x_mlp"].name] = block.hooks["x_mlp"]
            table.update((p.name, p) for p in block.mlp.hooks.values())
            i += 1
            block.hooks["resid_post"].name = names.resid(i)
            table[names.resid(i)] = block.hooks["resid_post"]
    for point in (model.hooks["x_final"], model.hooks["logits"]):
        table[point.name] = point
    return table


def points(model) -> dict[str, HookPoint]:
    """Every hook point of ``model`` by name, in the order a forward pass reaches them."""
    return model.hook_points


@contextmanager
def hooked(model, fns: dict[str, HookFn | Iterable[HookFn]]) -> Iterator:
    """Inside the ``with`` block, each function of ``fns`` (name -> function, or a list of them) is attached to the
    named point of ``model``; afterwards they are taken off again, even when the block raises. Blocks nest."""
    table = points(model)
    unknown = [name for name in fns if name not in table]
    if unknown:
        raise KeyError(f"this model has no hook point {', '.join(map(repr, unknown))}; it has "
                       f"{', '.join(table)}")
    attached = []
    try:
        for name, fn in fns.items():
            for f in ([fn] if callable(fn) else list(fn)):
                table[name].fns.append(f)
                attached.append((table[name], f))
        yield model
    finally:
        for point, f in reversed(attached):  # each the very entry this block attached (the same function may sit
            i = max(j for j, g in enumerate(point.fns) if g is f)  # in an enclosing block's list too)
            del point.fns[i]


@contextmanager
def suspended(model) -> Iterator:
    """Inside the ``with`` block no function attached so far acts: a clean run, even inside an intervention."""
    table = points(model)
    saved = {name: p.fns for name, p in table.items()}
    try:
        for p in table.values():
            p.fns = []
        yield model
    finally:
        for name, fns in saved.items():
            table[name].fns = fns


class Cache(dict):
    """Activations by name (``helpers.model.names``): "t", the residual stream "x0", "x1", ... in the order it is
    written, "L0.q" ... inside the blocks, "logits".

    "p" = softmax("logits") over the vocabulary is listed with the rest but computed the first time it is read, then
    kept: most readers want a few activations of a big batch, and p is as large as the logits (200 texts x 32 tokens
    x 2,000 words = 51 MB)."""

    def _p_pending(self) -> bool:
        """True while "p" is due (the logits are in) but not computed yet."""
        return dict.__contains__(self, names.LOGITS) and not dict.__contains__(self, names.PROBS)

    def __setitem__(self, key: str, value) -> None:
        if key == names.LOGITS:
            dict.pop(self, names.PROBS, None)  # new logits: p is due again
        dict.__setitem__(self, key, value)

    def __missing__(self, key: str) -> torch.Tensor:
        if key == names.PROBS and self._p_pending():
            p = softmax(dict.__getitem__(self, names.LOGITS), dim=-2)  # (..., n_vocab, n)
            dict.__setitem__(self, names.PROBS, p)
            return p
        raise KeyError(key)

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or (key == names.PROBS and self._p_pending())

    def __iter__(self) -> Iterator[str]:
        yield from dict.__iter__(self)
        if self._p_pending():
            yield names.PROBS

    def __len__(self) -> int:
        return dict.__len__(self) + self._p_pending()

    def keys(self) -> KeysView:
        return KeysView(self)

    def items(self) -> ItemsView:
        return ItemsView(self)

    def values(self) -> ValuesView:
        return ValuesView(self)

    def get(self, key, default=None):
        return self[key] if key in self else default

    @property
    def resid_names(self) -> list[str]:
        return sorted((k for k in self if names.is_resid(k)), key=names.resid_index)


def cached_names(model) -> list[str]:
    """The names a full cache of ``model`` holds, in order ("p" last)."""
    return [name for name, p in points(model).items() if p.cached] + [names.PROBS]


@contextmanager
def caching(model, cache: Cache, keys: Iterable[str] | None = None) -> Iterator[Cache]:
    """Inside the ``with`` block every forward pass stores its activations in ``cache`` (only ``keys`` when given;
    "p" comes with "logits")."""
    wanted = None if keys is None else set(keys)
    if wanted is not None and names.PROBS in wanted:
        wanted.add(names.LOGITS)

    def store(name: str) -> HookFn:
        def reader(t: torch.Tensor) -> None:
            cache[name] = t
        return reader
    fns = {name: store(name) for name, p in points(model).items()
           if p.cached and (wanted is None or name in wanted)}
    with hooked(model, fns):
        yield cache
