"""Path-specific ablation: take one head's output out of ONE path through the model, leave every other path.

The residual stream is a sum (x1 = x0 + sum_h o^h, ...), and everything after a head reads that sum: the next
layers' queries, keys and values, their MLPs, and — through the final LayerNorm — the unembedding (the head's
*direct path* to the logits). Switching the head off (``helpers.interp.ablation``) removes its output o^h from all
of these at once, so it says whether the model needs the head, not which reader uses it. Here o^h is removed from
one reader only ("A Mathematical Framework for Transformer Circuits", Elhage et al. 2021, reads a two-layer model
as such paths; path patching, Wang et al. 2022 and Goldowsky-Dill et al. 2023, intervenes on them):

    "q", "k", "v"   the queries, keys or values of a later layer's heads (all of them, or one):
                    x_k = x - o^h + replacement, while its queries and values still read x
    "mlp"           the input of an MLP at the head's layer or later
    "logits"        the direct path: the final stream before LayerNorm and unembedding, x - o^h + replacement;
                    every layer in between still reads the head as before

The replacement is 0 ("zero") or the mean of o^h over reference texts and positions ("mean", as in
``ablated``). The edit acts on the stream *before* the reader's LayerNorm, so in a pre-LN model the reader
normalises the edited stream, as it would if the head had written that.

    with path_ablated(model, (0, 1), to=(1, "k")):        # layer 1's keys no longer see head 0.1
        loss = repeat_loss(model, probe)[1]
    with path_ablated(model, [(0, 0), (0, 1)], to=[(1, 0, "q"), "logits"]):   # two heads; head 1.0's queries, logits
        ...

Blocks nest with each other and with ``ablated``. Inside, ``run_with_cache`` shows the edited q, k, v of the
reader (each computed from its own stream); o^h itself, and everything the head computes, are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch

from helpers.interp.ablation import fits, given_means, mean_activations
from helpers.interp.validate import _whole, check_head, check_layer
from helpers.model import names
from helpers.model.hooks import hooked
from helpers.model.transformer import Transformer

READS = ("q", "k", "v")  # what a later head computes from the stream
PATHS = READS + ("mlp", "logits")


def parse_paths(model: Transformer, heads: list[tuple[int, int]], to) -> list[tuple]:
    """``to`` -> a list of checked paths: ("logits",), ("mlp", layer), or (kind, layer, reader head | None)
    with kind in "q", "k", "v". Accepts one path or a list: "logits", (1, "k"), (1, 0, "k"), (1, "mlp").
    heads: the checked (layer, head) pairs whose output is taken out; every reader must come after them."""
    layer_w, h_w = max(heads)  # the latest writer decides which readers come after all of them
    if isinstance(to, str) or (isinstance(to, tuple) and to and isinstance(to[-1], str)):
        items = [to]
    elif isinstance(to, list | tuple):
        items = list(to)
    else:
        items = [to]  # refused below, with the forms a path takes
    if not items:
        raise ValueError("name at least one path: 'logits', (layer, 'q' | 'k' | 'v' | 'mlp') or (layer, head, 'q')")
    out = []
    for item in items:
        if item == "logits":
            out.append(("logits",))
            continue
        if not isinstance(item, tuple | list) or len(item) not in (2, 3) or not isinstance(item[-1], str):
            raise ValueError(f"{item!r} is not a path: name one as 'logits', (layer, 'q' | 'k' | 'v' | 'mlp') or "
                             "(layer, head, 'q' | 'k' | 'v')")
        kind = item[-1]
        if kind not in PATHS or kind == "logits":
            raise ValueError(f"{kind!r} is not a path a layer reads: a later layer's heads read the stream as "
                             "queries 'q', keys 'k' and values 'v', its MLP as 'mlp'; the unembedding is 'logits'")
        needs = "mlp" if kind == "mlp" else "attention"
        layer = check_layer(model, item[0], needs)
        if kind == "mlp":
            if len(item) == 3:
                raise ValueError(f"{item!r}: an MLP reads the stream as a whole — name it (layer, 'mlp'), no head")
            if layer < layer_w:
                raise ValueError(f"layer {layer}'s MLP comes before head {layer_w}.{h_w} writes: a component only "
                                 "reads what earlier heads wrote into the residual stream")
            out.append(("mlp", layer))
            continue
        if layer <= layer_w:
            raise ValueError(f"layer {layer}'s heads cannot read head {layer_w}.{h_w}: a head's {kind} is computed "
                             f"from the residual stream before its own layer writes, so only heads of layers "
                             f"{layer_w + 1} and later read layer {layer_w}'s output")
        reader = None
        if len(item) == 3:
            reader = check_head(model, layer, item[1])[1]
        out.append((kind, layer, reader))
    return out


def _read_edit(delta, reader: int | None, n_heads: int):
    """The edit of one reader's stream x_q, x_k or x_v, (batch, d_model, n) or one per head (batch, n_heads, d_model,
    n): delta() added for every head (reader None), or for head ``reader`` alone (the stream gets a head axis).

    delta() is the replacement minus o^h, (batch, d_model, n), of the current forward pass."""
    def edit(t: torch.Tensor) -> torch.Tensor:
        d = delta()
        if reader is None:
            return t + (d if t.dim() == d.dim() else d.unsqueeze(-3))
        if t.dim() == d.dim():  # one stream for every head -> one copy per head
            t = t.unsqueeze(-3).expand(*t.shape[:-2], n_heads, *t.shape[-2:])
        t = t.clone()
        t[..., reader, :, :] += d
        return t
    return edit


@contextmanager
def path_ablated(model: Transformer, heads, to, how: str = "zero", reference=None,
                 positions: slice | Sequence[int] | None = None, means: dict | None = None) -> Iterator[Transformer]:
    """Inside the ``with`` block, the outputs o^h of ``heads`` are replaced in the paths ``to`` only.

    heads:      one (layer, head) pair, e.g. (0, 1), or a list of them (their outputs are taken out together)
    to:         one path or a list: "logits" (the direct path), (layer, "q" | "k" | "v") for every head of a later
                layer, (layer, head, "q" | "k" | "v") for one head, (layer, "mlp") for an MLP at or after the heads
    how:        "zero" (o^h := 0 on those paths) or "mean" (the mean of o^h over ``reference`` (batch, n) token ids
                and ``positions``, as in ``helpers.interp.ablation.mean_activations``)
    means:      instead of ``reference``, the answer of ``mean_activations`` for these heads, computed once and reused
                (pooled over positions, or ``per_position``)

    What is cut is the direct edge only: the readers no longer see the heads' output itself, but a head or an MLP
    between the two layers still reads it, and what that component writes from it still reaches the readers (to cut
    those routes too, list them in ``to`` as well). Every argument is checked before anything changes; afterwards the
    model is exactly as before.
    """
    if how not in ("zero", "mean"):
        raise ValueError(f"how must be 'zero' or 'mean', got {how!r}")
    pairs = [heads] if isinstance(heads, tuple) and len(heads) == 2 and not isinstance(heads[0], tuple) \
        else list(heads) if isinstance(heads, list | tuple) else None
    if not pairs or any(not isinstance(p, tuple | list) or len(p) != 2 for p in pairs):
        raise TypeError(f"heads must be a (layer, head) pair, e.g. (0, 1), or a list of them, got {heads!r}")
    writers = sorted({check_head(model, _whole(p[0], "layer"), _whole(p[1], "head")) for p in pairs})
    paths = parse_paths(model, writers, to)
    if how == "mean" and means is not None:
        means = given_means(means, [("head", *w) for w in writers], reference, positions)
        replacement = {w: means[("head", *w)] for w in writers}
    elif how == "mean":
        if reference is None:
            raise ValueError("mean ablation needs reference texts: path_ablated(..., how='mean', reference=tokens "
                             "(batch, n)) — the mean of o^h is taken over them")
        means = mean_activations(model, reference, heads=writers, positions=positions)
        replacement = {w: means[("head", *w)] for w in writers}
    elif means is not None:
        raise ValueError("means are the values of a mean ablation; with how='zero' leave them out")
    elif reference is not None or positions is not None:
        raise ValueError("reference and positions set the mean of a mean ablation; with how='zero' leave them out")
    else:
        replacement = {w: torch.zeros(model.cfg.d_model) for w in writers}

    seen: dict[tuple[int, int], torch.Tensor] = {}

    def capture(layer: int, hs: list[int]):
        def edit(o_heads: torch.Tensor) -> torch.Tensor:  # (batch, n_heads, d_model, n), passed on unchanged
            for h in hs:
                seen[layer, h] = o_heads[..., h, :, :]
            return o_heads
        return edit

    def delta() -> torch.Tensor:  # (batch, d_model, n): what the path reads instead of sum_h o^h, minus sum_h o^h
        return sum(fits(replacement[w], seen[w].shape[-1], 2).to(seen[w].dtype) - seen[w] for w in writers)

    edits: dict[str, list] = {}
    for layer in sorted({w[0] for w in writers}):
        hs = [h for (l_, h) in writers if l_ == layer]
        edits.setdefault(names.key(layer, "o_heads"), []).append(capture(layer, hs))
    for path in paths:
        if path[0] in READS:
            kind, layer, reader = path
            edits.setdefault(names.read(layer, "x_" + kind), []).append(_read_edit(delta, reader, model.cfg.n_heads))
        elif path[0] == "mlp":
            edits.setdefault(names.read(path[1], "x_mlp"), []).append(lambda x: x + delta())
        else:
            edits.setdefault(names.FINAL, []).append(lambda x: x + delta())
    with hooked(model, edits):
        yield model
