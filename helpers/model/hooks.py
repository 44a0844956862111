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

A hook point is a module of the model (``model.blocks[0].attn.hook_A``), given its post name once, when the model is
built, as TransformerLens's are; ``model.hook_points`` lists them in the order a forward pass reaches them. "p" is a
hook point too: the model computes the softmax only when something is attached to it (the cache, when asked).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import torch
from torch import nn

from helpers.model import names

HookFn = Callable[[torch.Tensor], "torch.Tensor | None"]


class HookPoint(nn.Module):
    """The identity on one activation, unless functions are attached (``hooked``); costs one check when none is.

    name: the post's name, "L0.A", "x2", "L1.x_k"; cached: an activation the cache holds (False: a reader's view of
    the stream)."""

    def __init__(self, name: str, cached: bool = True):
        super().__init__()
        self.name = name
        self.cached = cached
        self.fns: list[HookFn] = []

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        for fn in self.fns:
            out = fn(t)
            if out is not None:
                t = out
        return t

    def extra_repr(self) -> str:
        return f"{self.name!r}, {len(self.fns)} attached"


def as_is(name: str, t: torch.Tensor) -> torch.Tensor:
    """The default ``hook`` of the pure functions ``attention`` and ``mlp``: every activation left as it is."""
    return t


def points_in_order(model) -> dict[str, HookPoint]:
    """Every hook point of ``model`` by name: its modules in the order the model registers them, which is the order
    a forward pass reaches them (each module registers its hook points where its forward pass calls them)."""
    return {p.name: p for p in model.modules() if isinstance(p, HookPoint)}


def points(model) -> dict[str, HookPoint]:
    """Every hook point of ``model`` (a Transformer, or any module holding hook points, such as one Block) by name,
    in the order a forward pass reaches them."""
    table = getattr(model, "hook_points", None)
    return table if table is not None else points_in_order(model)


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
    written, "L0.q" ... inside the blocks, "logits" and "p". A dict, with the residual stream's names in order."""

    @property
    def resid_names(self) -> list[str]:
        return sorted((k for k in self if names.is_resid(k)), key=names.resid_index)


def cached_names(model) -> list[str]:
    """The names a full cache of ``model`` holds, in order ("p" last)."""
    return [name for name, p in points(model).items() if p.cached]


@contextmanager
def caching(model, cache: Cache, keys: Iterable[str] | None = None) -> Iterator[Cache]:
    """Inside the ``with`` block every forward pass stores its activations in ``cache`` (only ``keys`` when given)."""
    wanted = None if keys is None else set(keys)

    def store(name: str) -> HookFn:
        def reader(t: torch.Tensor) -> None:
            cache[name] = t
        return reader
    fns = {name: store(name) for name, p in points(model).items()
           if p.cached and (wanted is None or name in wanted)}
    with hooked(model, fns):
        yield cache
