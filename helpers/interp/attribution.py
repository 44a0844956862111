"""Direct logit attribution: how much each head and each MLP neuron adds to one logit.

The residual stream is a sum ("A Mathematical Framework for Transformer Circuits", Elhage et al.
2021, and the post's x1 = x0 + sum_h o^h, x2 = x1 + m). At the last layer, at position i:

    x_i = W_E t_i + W_pos[:, i] + sum_layers ( sum_h o^h_i + sum_j W_2[:, j] z_j,i + b_2 )

and the logit of token a is W_U[a] . x_i, a dot product, so it splits into one term per piece:
the *direct* effect of each head and neuron on that logit (not what it does through later layers).
A logit difference W_U[a] - W_U[b] splits the same way.

Final LayerNorm. A model with ``layernorm=True`` unembeds LN(x_i) = (x_i - mean(x_i)) / sigma_i * gamma + beta,
which is not linear in x_i because sigma_i depends on x_i. Here sigma_i is *frozen at its value on
this input*: LN is then affine, each piece c contributes W_U[a] . ((c - mean(c)) / sigma_i * gamma),
and beta adds W_U[a] . beta on its own. With sigma_i frozen the terms add up to the model's logit
exactly (checked on every call); they say how the logit is made on *this* input, not how it would
change if a piece were removed (that changes sigma_i too: use ``helpers.interp.ablation``).
LayerNorms inside the blocks (before attention and the MLP) need no such care: they change what a
head or the MLP computes, not how its output is added.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from helpers.interp.validate import batch_of_tokens, check_position, check_token_id
from helpers.model import names
from helpers.model.transformer import Transformer


@dataclass
class LogitAttribution:
    """Every term of one logit (or logit difference) at one position; a leading batch dimension
    (when the tokens had one) is written ``...``. ``total()`` equals ``logit``."""

    heads: torch.Tensor  # (..., n_layers, n_heads)  W_U[a] . o^h_i of each head
    neurons: torch.Tensor  # (..., n_layers, d_mlp)  W_U[a] . W_2[:, j] z_j,i of each hidden neuron (d_mlp may be 0)
    mlp_bias: torch.Tensor  # (..., n_layers)  W_U[a] . b_2 of each layer's MLP (0 without an MLP)
    attn_bias: torch.Tensor  # (..., n_layers)  W_U[a] . b_O of each attention layer (GPT-2's; 0 without biases)
    embed: torch.Tensor  # (...)  W_U[a] . W_E t_i, the direct path of notebook 02's zero-layer model
    pos: torch.Tensor  # (...)  W_U[a] . W_pos[:, i] (0 without positional embeddings)
    ln_beta: torch.Tensor  # (...)  W_U[a] . beta of the final LayerNorm (0 without one)
    logit: torch.Tensor  # (...)  the model's own logit (or logit difference) at that position
    ln_frozen: bool  # True: the final LayerNorm's sigma was frozen at its value on this input
    has_attn_bias: bool = False  # True: the model's attention has biases (GPT-2), so "L0.b_O" terms exist

    def total(self) -> torch.Tensor:
        """The sum of every term: (...,), equal to ``logit``."""
        return (self.heads.sum((-1, -2)) + self.neurons.sum((-1, -2)) + self.mlp_bias.sum(-1)
                + self.attn_bias.sum(-1) + self.embed + self.pos + self.ln_beta)

    def terms(self) -> dict[str, float]:
        """Every term by name, for one text: "W_E t", "W_pos", then per layer "L0.h2" (head 2), "L0.n17"
        (neuron 17), "L0.b_2" (helpers.model.names builds these), "L0.b_O" with attention biases, and "LN beta"."""
        if self.logit.dim() != 0:
            raise ValueError("terms() names the terms of one text; index the batch first (or pass tokens (n,))")
        out = {"W_E t": float(self.embed), "W_pos": float(self.pos)}
        for layer in range(self.heads.shape[0]):
            out |= {names.head(layer, h): float(v) for h, v in enumerate(self.heads[layer])}
            if self.has_attn_bias:
                out[names.attn_bias(layer)] = float(self.attn_bias[layer])
            out |= {names.neuron(layer, j): float(v) for j, v in enumerate(self.neurons[layer])}
            if self.neurons.shape[-1]:
                out[names.mlp_bias(layer)] = float(self.mlp_bias[layer])
        if self.ln_frozen:
            out["LN beta"] = float(self.ln_beta)
        return out


@torch.no_grad()
def direct_logit_attribution(model: Transformer, tokens, target: int, position: int = -1,
                             minus: int | None = None) -> LogitAttribution:
    """Split logit ``target`` (minus logit ``minus``, if given) at ``position`` into its direct terms.

    tokens: (n,) or (batch, n) token ids; position counted from 0 (-1 = the last token, t_n, whose
    logits predict the next token). Raises if the terms do not add up to the model's logit.
    """
    ids, single = batch_of_tokens(model, tokens)
    i = check_position(ids.shape[-1], position)
    target = check_token_id(model, target, "target token id")
    W_U = model.unembed.W_U  # (n_vocab, d_model)
    u = W_U[target]  # (d_model,): the logit query
    if minus is not None:
        u = u - W_U[check_token_id(model, minus, "token id to subtract")]
    logits, cache = model.run_with_cache(ids)
    x = cache[cache.resid_names[-1]][..., i]  # (batch, d_model): the stream the unembedding reads
    ln = model.ln_final
    if ln is not None:  # LN(x) = (x - mean x) / sigma * gamma + beta, sigma frozen at this input's value
        sigma = torch.sqrt(x.var(dim=-1, unbiased=False, keepdim=True) + ln.eps)  # (batch, 1)
        w = u * ln.gamma  # (d_model,)
        w = (w - w.mean()) / sigma  # (batch, d_model): subtracting the mean of c is the same as centring w
        ln_beta = (u @ ln.beta).expand(ids.shape[0])
    else:
        w = u.expand(ids.shape[0], -1)
        ln_beta = torch.zeros(ids.shape[0])
    embed = (model.embed.W_E[:, ids[:, i]].T * w).sum(-1)  # (batch,)
    pos = (w @ model.pos_embed.W_pos[:, i]) if model.pos_embed is not None else torch.zeros(ids.shape[0])
    heads, neurons, mlp_bias, attn_bias = [], [], [], []
    for layer, block in enumerate(model.blocks):
        o_heads = cache[names.key(layer, "o_heads")][..., i]  # (batch, n_heads, d_model)
        heads.append(torch.einsum("bhd,bd->bh", o_heads, w))
        b_O = block.attn.b_O_or_none  # GPT-2's output bias: added once per layer, by no head
        attn_bias.append(w @ b_O if b_O is not None else torch.zeros(ids.shape[0]))
        if block.mlp is not None:
            z = cache[names.key(layer, "z")][..., i]  # (batch, d_mlp)
            neurons.append(z * (w @ block.mlp.W_2))  # z_j * (w . W_2[:, j])
            mlp_bias.append(w @ block.mlp.b_2)
        else:
            neurons.append(torch.zeros(ids.shape[0], 0))
            mlp_bias.append(torch.zeros(ids.shape[0]))
    n_layers = len(model.blocks)
    d_mlp = neurons[0].shape[-1] if neurons else 0
    logit = logits[:, target, i] - (logits[:, minus, i] if minus is not None else 0)
    out = LogitAttribution(
        heads=torch.stack(heads, -2) if heads else torch.zeros(ids.shape[0], 0, model.cfg.n_heads),
        neurons=torch.stack(neurons, -2) if neurons else torch.zeros(ids.shape[0], 0, d_mlp),
        mlp_bias=torch.stack(mlp_bias, -1) if mlp_bias else torch.zeros(ids.shape[0], n_layers),
        attn_bias=torch.stack(attn_bias, -1) if attn_bias else torch.zeros(ids.shape[0], n_layers),
        embed=embed, pos=pos, ln_beta=ln_beta, logit=logit, ln_frozen=ln is not None,
        has_attn_bias=model.cfg.attn_biases)
    scale = 1 + out.heads.abs().sum((-1, -2)) + out.neurons.abs().sum((-1, -2)) + embed.abs() + pos.abs()
    if not bool(((out.total() - logit).abs() <= 1e-4 * scale).all()):
        raise RuntimeError(f"direct logit attribution does not add up: terms sum to {out.total().tolist()}, "
                           f"the model's logit is {logit.tolist()} (does the model have a part this code ignores?)")
    if single:
        out = replace(out, **{f: getattr(out, f)[0] for f in ("heads", "neurons", "mlp_bias", "attn_bias", "embed",
                                                             "pos", "ln_beta", "logit")})
    return out
