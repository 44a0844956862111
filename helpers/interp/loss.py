"""Per-position loss: how surprised the model is by each next token — the post's training objective
(cross-entropy of the next token) kept apart position by position instead of averaged.

For token ids t_1 ... t_{n+1} the model reads t_1 ... t_n and at position i predicts t_{i+1}:

    loss_i = -ln p_i[t_{i+1}],   p_i = softmax(logits[:, i])      i = 1 ... n

Its mean is ``Transformer.loss``. On a sequence that repeats ([A B C ...][A B C ...]) a model with
induction heads has a high loss on the first half and a low one on the second (notebook 09).
"""

from __future__ import annotations

import torch

from helpers.model.transformer import TEXTS_PER_PASS, Transformer


@torch.no_grad()
def per_position_loss(model: Transformer, tokens) -> torch.Tensor:
    """tokens (n + 1,) or (batch, n + 1) ids -> loss (n,) or (batch, n) in nats; entry i (from 0) is
    -ln p(t_{i+2} | t_1 ... t_{i+1}), counting tokens from 1 as the post does. n must be <= n_ctx:
    the last token is only a target."""
    tokens = torch.as_tensor(tokens)
    if tokens.dim() not in (1, 2) or tokens.shape[-1] < 2:
        raise ValueError(f"per_position_loss needs n + 1 >= 2 token ids, shape (n + 1,) or (batch, n + 1): "
                         f"the model reads the first n and predicts each next one; got shape {tuple(tokens.shape)}")
    n_ctx = model.cfg.n_ctx
    if tokens.shape[-1] - 1 > n_ctx:
        raise ValueError(f"{tokens.shape[-1]} tokens give a context of n = {tokens.shape[-1] - 1} (the last one is "
                         f"only a target), but this model's n_ctx is {n_ctx}: give at most {n_ctx + 1} tokens")
    targets = model.check_tokens(tokens[..., 1:])
    if tokens.dim() == 1:
        return _nll(model(tokens[None, :-1]), targets[None])[0]
    # a few texts at a time: the logits and ln p of a whole batch would each be n_vocab floats per token
    return torch.cat([_nll(model(tokens[a:a + TEXTS_PER_PASS, :-1]), targets[a:a + TEXTS_PER_PASS])
                      for a in range(0, len(tokens), TEXTS_PER_PASS)])


def _nll(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """logits (batch, n_vocab, n), targets (batch, n) -> -ln p[target] (batch, n)."""
    logp = torch.log_softmax(logits.contiguous(), dim=-2)  # over the vocabulary
    return -logp.gather(-2, targets.unsqueeze(-2)).squeeze(-2)
