"""MLP neurons — the post's "The multilayer perceptron": z = ReLU(W_1 x + b_1) has one entry per
hidden neuron; a neuron "fires" on a position when its z is above 0."""

from __future__ import annotations

import torch

from helpers.interp.validate import batch_of_tokens, check_layer, check_position
from helpers.model import names
from helpers.model.transformer import Transformer


@torch.no_grad()
def hidden(model: Transformer, tokens, layer: int = 0, position: int = -1) -> torch.Tensor:
    """z of the MLP in ``layer`` at ``position`` (default: the last) of tokens (n,) -> (d_mlp,),
    or of tokens (batch, n) -> (batch, d_mlp)."""
    layer = check_layer(model, layer, "mlp")
    ids, single = batch_of_tokens(model, tokens)
    i = check_position(ids.shape[-1], position)
    _, cache = model.run_with_cache(ids)
    z = cache[names.key(layer, "z")][..., i]  # (batch, d_mlp)
    return z[0] if single else z


def firing_counts(model: Transformer, prompts, layer: int = 0, position: int = -1) -> torch.Tensor:
    """For every hidden neuron of ``layer``'s MLP, on how many prompts it fires (z > 0 at ``position``,
    default the last): (d_mlp,) counts. prompts: token ids (batch, n), or a task with a ``prompts()``
    method returning (ids, answers), such as ``helpers.lessons.facts.FactsTask``."""
    if hasattr(prompts, "prompts"):
        prompts, _ = prompts.prompts()
    z = hidden(model, prompts, layer, position)
    return (z > 0).reshape(-1, z.shape[-1]).sum(0)
