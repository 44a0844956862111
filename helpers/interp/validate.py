"""Checks shared by ``helpers.interp``: a layer, head, neuron, position or token that does not exist
gets a message in the post's terms ("layer 3 does not exist: this model has n_layers = 2") instead
of an IndexError from deep inside torch."""

from __future__ import annotations

import operator

import torch

from helpers.model.transformer import Transformer


def _whole(value, what: str) -> int:
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)  # int, numpy and 0-d torch integers; not floats
    except TypeError:
        raise TypeError(f"{what} must be a whole number (0, 1, ...), got {value!r}") from None


def _range(count: int) -> str:
    return "none" if count == 0 else ("only 0" if count == 1 else f"0 ... {count - 1}")


def check_model(model) -> Transformer:
    if not isinstance(model, Transformer):
        raise TypeError(f"expected a helpers.model.Transformer, got {type(model).__name__}")
    return model


def check_layer(model: Transformer, layer: int, needs: str = "attention") -> int:
    """``layer`` as an int, after checking it exists and has ``needs`` ("attention" or "mlp")."""
    layer, n_layers = _whole(layer, "layer"), check_model(model).cfg.n_layers
    if not 0 <= layer < n_layers:
        why = (" (the post's zero-layer Transformer: no attention, no MLP)" if n_layers == 0
               else f" (layers {_range(n_layers)})")
        raise ValueError(f"layer {layer} does not exist: this model has n_layers = {n_layers}{why}")
    if needs == "mlp" and model.blocks[layer].mlp is None:
        raise ValueError(f"layer {layer} has no MLP: this model is attention-only (d_mlp = {model.cfg.d_mlp})")
    if needs not in ("attention", "mlp"):
        raise ValueError(f"needs must be 'attention' or 'mlp', got {needs!r}")
    return layer


def check_head(model: Transformer, layer: int, head: int) -> tuple[int, int]:
    """(layer, head) as ints, after checking both exist."""
    layer = check_layer(model, layer, "attention")
    head, n_heads = _whole(head, "head"), model.cfg.n_heads
    if not 0 <= head < n_heads:
        raise ValueError(f"head {head} does not exist: layer {layer} has n_heads = {n_heads} (heads {_range(n_heads)})")
    return layer, head


def check_neuron(model: Transformer, layer: int, neuron: int) -> tuple[int, int]:
    """(layer, neuron) as ints, after checking the layer has an MLP with that hidden neuron."""
    layer = check_layer(model, layer, "mlp")
    neuron, d_mlp = _whole(neuron, "neuron"), model.cfg.d_mlp
    if not 0 <= neuron < d_mlp:
        raise ValueError(f"neuron {neuron} does not exist: the MLP of layer {layer} has d_mlp = {d_mlp} "
                         f"hidden neurons ({_range(d_mlp)})")
    return layer, neuron


def check_token_id(model: Transformer, token: int, what: str = "token id") -> int:
    token, n_vocab = _whole(token, what), check_model(model).cfg.n_vocab
    if not 0 <= token < n_vocab:
        raise ValueError(f"{what} {token} is outside the vocabulary (0 ... {n_vocab - 1}, n_vocab = {n_vocab})")
    return token


def check_position(n: int, position: int) -> int:
    """A position of a context of n tokens, counted from 0 as in the code (negative counts from the end:
    -1 is the last token, t_n). Returns it as 0 ... n - 1."""
    position = _whole(position, "position")
    if not -n <= position < n:
        raise ValueError(f"position {position} does not exist: the context has n = {n} tokens "
                         f"(positions 0 ... {n - 1}, or -1 for the last)")
    return position % n


def batch_of_tokens(model: Transformer, tokens) -> tuple[torch.Tensor, bool]:
    """Token ids as (batch, n), checked by the model (n <= n_ctx, ids inside the vocabulary), and
    whether the input had no batch dimension (then results drop it again)."""
    tokens = check_model(model).check_tokens(tokens)
    return (tokens[None], True) if tokens.dim() == 1 else (tokens, False)
