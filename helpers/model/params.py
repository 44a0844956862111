"""Count a Transformer's parameters from its shapes — the post's parameter table and appendix.

Per layer, with H = n_heads heads of size d_head:
    attention   W_Q, W_K, W_V (H, d_head, d_model) and W_O (H, d_model, d_head): 4 H d_head d_model
    MLP         W_1 (d_mlp, d_model) + b_1 (d_mlp,) + W_2 (d_model, d_mlp) + b_2 (d_model,)
    LayerNorm   gamma, beta (d_model,) before attention and before the MLP: 2 x 2 d_model
Once: W_E (d_model, n_vocab), W_pos (d_model, n_ctx), W_U (n_vocab, d_model), a final LayerNorm.

Real GPT models differ from the post's simplified tables in two details that matter for the count:
GPT-2 and GPT-3 give the attention projections biases (3 H d_head + d_model per layer), and they
*tie* the unembedding to the embedding (W_U = W_E^T), so the n_vocab x d_model matrix is stored once.
"""

from __future__ import annotations


def count_params(d_model: int, n_heads: int, d_head: int, d_mlp: int, n_layers: int, n_vocab: int, n_ctx: int, *,
                 layernorm: bool = True, attn_biases: bool = False, tied_unembed: bool = False,
                 positional: bool = True) -> dict[str, int]:
    """Parameters by part and their "total". Defaults = this series' ``Transformer``."""
    for name, v in (("d_model", d_model), ("n_vocab", n_vocab), ("n_ctx", n_ctx)):
        if v < 1:
            raise ValueError(f"{name} must be at least 1, got {v}")
    if min(n_heads, d_head, d_mlp, n_layers) < 0:
        raise ValueError("n_heads, d_head, d_mlp and n_layers cannot be negative")
    attn = 4 * n_heads * d_head * d_model + (3 * n_heads * d_head + d_model if attn_biases else 0)
    mlp = 2 * d_model * d_mlp + d_mlp + d_model if d_mlp else 0
    ln_per_layer = (2 if d_mlp else 1) * 2 * d_model if layernorm else 0
    parts = {
        "embedding W_E": d_model * n_vocab,
        "positional W_pos": d_model * n_ctx if positional else 0,
        "attention (all layers)": n_layers * attn,
        "MLP (all layers)": n_layers * mlp,
        "LayerNorm (all)": n_layers * ln_per_layer + (2 * d_model if layernorm else 0),
        "unembedding W_U": 0 if tied_unembed else n_vocab * d_model,
    }
    parts["total"] = sum(parts.values())
    return parts


def count_config(cfg) -> int:
    """Total parameters of ``Transformer(cfg)`` from the formula (tests check it equals n_params())."""
    return count_params(cfg.d_model, cfg.n_heads, cfg.d_head, cfg.d_mlp, cfg.n_layers, cfg.n_vocab, cfg.n_ctx,
                        layernorm=cfg.layernorm, positional=cfg.positional, attn_biases=cfg.attn_biases,
                        tied_unembed=cfg.tied_unembed)["total"]
