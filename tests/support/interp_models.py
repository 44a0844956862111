"""Tiny models with hand-set weights for the helpers.interp tests: every number they produce can be
worked out on paper.

``uniform_model``: n_vocab 3, d_model 2, one layer of one head, no W_pos, no LayerNorm.
    W_E = [[1, 0, 2],      token 0 -> (1, 0), token 1 -> (0, 1), token 2 -> (2, 2)
           [0, 1, 2]]
    W_Q = W_K = 0          every score is 0: query i attends uniformly to tokens 1 ... i
    W_V = W_O = I          o_i = the mean of x0_1 ... x0_i
    W_U = [[1, 0], [0, 1], [0, 0]]     logit 0 reads the first coordinate, logit 1 the second
  optional MLP (d_mlp 2): W_1 = W_2 = I, b_1 = b_2 = 0, so z = ReLU(x1) and m = z.
"""

import torch

from helpers.model.config import Config
from helpers.model.transformer import Transformer


def uniform_model(mlp: bool = False) -> Transformer:
    cfg = Config(n_vocab=3, d_model=2, n_ctx=6, n_layers=1, n_heads=1, d_head=2, positional=False,
                 d_mlp=2 if mlp else 0)
    model = Transformer(cfg)
    with torch.no_grad():
        model.embed.W_E.copy_(torch.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, 2.0]]))
        attn = model.blocks[0].attn
        attn.W_Q.zero_()
        attn.W_K.zero_()
        attn.W_V.copy_(torch.eye(2)[None])
        attn.W_O.copy_(torch.eye(2)[None])
        model.unembed.W_U.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]))
        if mlp:
            m = model.blocks[0].mlp
            m.W_1.copy_(torch.eye(2))
            m.W_2.copy_(torch.eye(2))
            m.b_1.zero_()
            m.b_2.zero_()
    return model.eval()


def two_layer_model() -> Transformer:
    """Two layers of attention only, 2 heads each, d_model = d_head = 2, no W_pos, no LayerNorm
    (helpers.interp.paths' tests work its numbers out by hand):

        W_E = I (token 0 -> (1, 0), token 1 -> (0, 1)), W_U = [[1, 0], [0, 1]]
        layer 0, head 0: W_Q = W_K = 0, W_V = W_O = I   (o_i = the mean of x0_1 ... x0_i)
        layer 0, head 1: every weight 0                 (writes nothing)
        layer 1, head 0: W_Q = W_K = W_V = W_O = I       (S_ij = x_i . x_j / sqrt 2)
        layer 1, head 1: W_Q = W_K = 0, W_V = W_O = I   (uniform, like layer 0's head 0)
    """
    cfg = Config(n_vocab=2, d_model=2, n_ctx=4, n_layers=2, n_heads=2, d_head=2, positional=False)
    model = Transformer(cfg)
    eye = torch.eye(2)
    with torch.no_grad():
        model.embed.W_E.copy_(eye)
        model.unembed.W_U.copy_(eye)
        for layer, weights in ((0, {"W_Q": (0, 0), "W_K": (0, 0), "W_V": (1, 0), "W_O": (1, 0)}),
                               (1, {"W_Q": (1, 0), "W_K": (1, 0), "W_V": (1, 1), "W_O": (1, 1)})):
            attn = model.blocks[layer].attn
            for name, per_head in weights.items():
                getattr(attn, name).copy_(torch.stack([eye * w for w in per_head]))
    return model.eval()
