"""Hyper-parameters of a model, with the post's names (its parameter tables and appendix)."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Config:
    n_vocab: int  # number of distinct tokens (GPT-2: 50,257)
    d_model: int = 64  # width of the residual stream (GPT-2 Small: 768)
    n_ctx: int = 32  # longest context the model accepts; W_pos has this many columns (GPT-2: 1024)
    n_layers: int = 0  # attention (+ MLP) blocks; 0 = the post's "zero-layer Transformer"
    n_heads: int = 4  # attention heads per layer (GPT-2 Small: 12)
    d_head: int | None = None  # size of each head's query/key/value; None -> d_model // n_heads
    d_mlp: int = 0  # MLP hidden width; 0 = attention-only (convention when used: 4 * d_model)
    activation: str = "relu"  # MLP nonlinearity: "relu" (the post's tables), "gelu" (exact, erf) or "gelu_tanh"
    # (GPT-2's tanh approximation of GELU)
    layernorm: bool = False  # LayerNorm before each attention / MLP and before the unembedding
    positional: bool = True  # add W_pos (False: the model sees a bag of tokens)
    masked: bool = True  # the causal mask (softmax*) is on; False: every query sees the whole text, as in
    # notebook 04's model trained without the mask (checkpoints remember it: helpers.model.checkpoint)
    init_std: float = 0.02  # standard deviation of the random initial weights
    pos_init_std: float | None = None  # ... of W_pos's initial values; None -> init_std. A larger
    # value (0.5) lets heads attend by position from the start: it gives the word-level models
    # of tools/train_models.py their previous-token heads
    attn_biases: bool = False  # biases b_Q, b_K, b_V (n_heads, d_head) and b_O (d_model,) in attention (GPT-2)
    tied_unembed: bool = False  # W_U = W_E^T, one stored matrix (GPT-2); False: W_U is a parameter of its own

    def __post_init__(self) -> None:
        for name in ("n_vocab", "d_model", "n_ctx"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.n_layers < 0 or self.d_mlp < 0:
            raise ValueError("n_layers and d_mlp cannot be negative")
        if self.pos_init_std is not None and self.pos_init_std < 0:
            raise ValueError("pos_init_std (the spread of W_pos's initial values) cannot be negative, "
                             f"got {self.pos_init_std}")
        if self.n_layers and self.n_heads < 1:
            raise ValueError(f"a model with layers needs n_heads >= 1, got {self.n_heads}")
        if self.activation not in ("relu", "gelu", "gelu_tanh"):
            raise ValueError(f"activation must be 'relu', 'gelu' or 'gelu_tanh', got {self.activation!r}")
        if self.d_head is None:
            object.__setattr__(self, "d_head", max(1, self.d_model // max(1, self.n_heads)))

    def to_dict(self) -> dict:
        """The fields as a dict. GPT-2's options are left out while off, so that a checkpoint of the series' own
        models is stored exactly as before they existed (and code of that time can still read it)."""
        d = asdict(self)
        for name in GPT2_OPTIONS:
            if not d[name]:
                del d[name]
        return d


GPT2_OPTIONS = ("attn_biases", "tied_unembed")  # added for GPT-2 (helpers/gpt2/); False: the post's model
