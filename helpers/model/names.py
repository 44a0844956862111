"""The names of the activations a model's cache holds — defined once, used by the model, the
widgets, ``helpers.interp``, the notebooks and the tests.

The post names every activation (its activation tables); the cache uses the same names:

    "t"                   token ids t_1 ... t_n                      (n,) or (batch, n)
    "x0", "x1", ...       the residual stream after the embedding and after every residual add,
                          in order: x1 = x0 + sum_h o^h (layer 0's attention), x2 = x1 + m (its MLP) ...
    "L{layer}.{name}"     inside block ``layer``: attention q, k, v, S, A, r, o_heads, o; MLP z, m
    "logits", "p"         the unembedding's output and its softmax

Hook points that are not cached (``helpers.model.hooks``): the residual stream as one reader sees it, before its
LayerNorm, "L{layer}.x_q", ".x_k", ".x_v" (that layer's queries, keys, values), "L{layer}.x_mlp" (its MLP), and
"x_final" (the final LayerNorm and unembedding). Each equals the stream unless a path-specific ablation edits it.

Heads and MLP neurons are named the same way when a result lists them (attribution terms, tables):
"L0.h2" is layer 0's head 2, "L1.n17" hidden neuron 17 of layer 1's MLP.

    >>> key(0, "A"), key(1, "z"), resid(2), head(0, 2), neuron(1, 17)
    ('L0.A', 'L1.z', 'x2', 'L0.h2', 'L1.n17')
"""

from __future__ import annotations

ATTENTION = ("q", "k", "v", "S", "A", "r", "o_heads", "o")  # stored by every attention layer
MLP = ("z", "m")  # stored by every MLP
TOKENS, LOGITS, PROBS = "t", "logits", "p"
READS = ("x_q", "x_k", "x_v", "x_mlp")  # the stream as a block's queries, keys, values and MLP read it
FINAL = "x_final"  # the stream as the final LayerNorm and the unembedding read it


def key(layer: int, name: str) -> str:
    """The cache key of activation ``name`` in block ``layer``: key(0, "A") == "L0.A"."""
    if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
        raise ValueError(f"layer must be a block number 0, 1, ..., got {layer!r}")
    if name not in ATTENTION + MLP:
        raise ValueError(f"no activation called {name!r} inside a block; attention stores {', '.join(ATTENTION)} "
                         f"and the MLP {', '.join(MLP)}")
    return f"L{layer}.{name}"


def read(layer: int, name: str) -> str:
    """The hook point of the stream that reader ``name`` of block ``layer`` sees: read(1, "x_k") == "L1.x_k"."""
    if name not in READS:
        raise ValueError(f"no reader called {name!r} inside a block; the readers are {', '.join(READS)}")
    return f"L{_index(layer, 'layer')}.{name}"


def _index(i, what: str) -> int:
    if isinstance(i, bool) or not isinstance(i, int) or i < 0:
        raise ValueError(f"{what} must be a number 0, 1, ..., got {i!r}")
    return i


def head(layer: int, h: int) -> str:
    """The label of head h in block ``layer``: head(0, 2) == "L0.h2"."""
    return f"L{_index(layer, 'layer')}.h{_index(h, 'head')}"


def neuron(layer: int, j: int) -> str:
    """The label of hidden neuron j of block ``layer``'s MLP: neuron(1, 17) == "L1.n17"."""
    return f"L{_index(layer, 'layer')}.n{_index(j, 'neuron')}"


def attn_bias(layer: int) -> str:
    """The label of block ``layer``'s attention output bias b_O (GPT-2's; it belongs to no head): "L0.b_O"."""
    return f"L{_index(layer, 'layer')}.b_O"


def mlp_bias(layer: int) -> str:
    """The label of block ``layer``'s MLP output bias b_2: mlp_bias(0) == "L0.b_2"."""
    return f"L{_index(layer, 'layer')}.b_2"


def resid(i: int) -> str:
    """The cache key of the i-th residual-stream state: resid(0) == "x0" (the embedding)."""
    if isinstance(i, bool) or not isinstance(i, int) or i < 0:
        raise ValueError(f"residual-stream states are numbered 0, 1, ..., got {i!r}")
    return f"x{i}"


def is_resid(name: str) -> bool:
    """True for "x0", "x1", ...: a residual-stream state."""
    return len(name) > 1 and name[0] == "x" and name[1:].isdigit()


def resid_index(name: str) -> int:
    """resid_index("x2") == 2."""
    if not is_resid(name):
        raise ValueError(f"{name!r} is not a residual-stream name like 'x0', 'x1'")
    return int(name[1:])
