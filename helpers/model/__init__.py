"""The Transformer of the post, one component per module, in the post's notation.

config.py       Config: n_vocab, d_model, n_ctx, n_heads, d_head, d_mlp, n_layers
embed.py        token embedding W_E, positional embedding W_pos, unembedding W_U
mlp.py          the MLP: z = ReLU(W_1 x + b_1), m = W_2 z + b_2
layernorm.py    LayerNorm (x - mu) / sigma * gamma + beta, and RMSNorm
attention.py    attention: single-query, matrix (softmax*) and concatenated forms; the Attention module
block.py        one block: attention (+ MLP), each added to the residual stream
transformer.py  the model: x0 = W_E t + W_pos, (layers), logits = W_U x; run_with_cache, activations
hooks.py        plumbing: a named hook point on every activation, the cache and every intervention go through them
project.py      W x for a whole batch in one matrix product (frozen weights: GPT-2), the same numbers as W @ x
checkpoint.py   save / load weights as safetensors (config and mask setting included), clear messages
                when a file is damaged or shapes disagree
names.py        the cache's activation names ("x0", "L0.A", ...), built in one place
"""

from helpers.model.config import Config  # noqa: F401
from helpers.model.embed import Embed, PosEmbed, Unembed  # noqa: F401
from helpers.model.transformer import Transformer  # noqa: F401
from helpers.model.layernorm import LayerNorm, RMSNorm  # noqa: F401
from helpers.model.mlp import MLP  # noqa: F401
