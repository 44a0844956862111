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
