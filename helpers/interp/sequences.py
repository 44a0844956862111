"""Test sequences for reading heads: a random segment followed by the same segment again.

On [A B C D][A B C D] every token of the second half has occurred before, and the token that
followed it then is the one that comes next now: an induction head ([A][B] ... [A] -> [B]) can
predict the whole second half, and nothing else can (the tokens are random). This is how induction
heads are found ("In-context Learning and Induction Heads", Olsson et al. 2022; notebook 09).
"""

from __future__ import annotations

import torch


def repeated_tokens(n_vocab: int, half: int, batch: int = 1, seed: int = 0, distinct: bool = True) -> torch.Tensor:
    """(batch, 2 * half) token ids: ``half`` random tokens, then the same tokens again.

    distinct: no token repeats inside a half (then the only repeats are the second half's, and every
    induction target is unambiguous); needs half <= n_vocab. The generator is seeded: same seed, same ids.
    """
    if half < 1 or batch < 1:
        raise ValueError(f"half and batch must be at least 1, got half = {half}, batch = {batch}")
    if distinct and half > n_vocab:
        raise ValueError(f"{half} distinct tokens do not exist in a vocabulary of n_vocab = {n_vocab}: "
                         f"use half <= {n_vocab} or distinct=False")
    g = torch.Generator().manual_seed(seed)
    if distinct:
        first = torch.stack([torch.randperm(n_vocab, generator=g)[:half] for _ in range(batch)])
    else:
        first = torch.randint(n_vocab, (batch, half), generator=g)
    return torch.cat([first, first], dim=-1)
