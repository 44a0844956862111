"""Reading the embedding matrix W_E (d_model x n_vocab, one column per token): nearest columns and analogies.

The post ("Tokens and embeddings") gives the classic example king - man + woman ≈ queen, a "royalty direction"
added to woman. Its earlier draft leaves "[todo: check real embeddings]"; notebook 02 checks it on GloVe word
vectors, notebook 11 on GPT-2's own W_E. Closeness is the cosine of the angle between columns: token columns have
very different lengths (frequent tokens are often shorter), and a plain dot product would favour the long ones.

    cosines(W_E, v)                        (n_vocab,): cos(angle) between v and every column
    analogy_vector(W_E, a, b, c)           (d_model,): W_E[:, a] - W_E[:, b] + W_E[:, c]
    analogy(W_E, a, b, c, k, among)        the k tokens nearest W_E[:, a] - W_E[:, b] + W_E[:, c], a, b, c left out
"""

from __future__ import annotations

import torch


def cosines(W_E: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """W_E (d_model, n_vocab), v (d_model,) -> (n_vocab,): the cosine between v and each column."""
    if W_E.dim() != 2 or v.shape != W_E.shape[:1]:
        raise ValueError(f"W_E must be (d_model, n_vocab) and v (d_model,): got {tuple(W_E.shape)} and "
                         f"{tuple(v.shape)}")
    return (v @ W_E) / (W_E.norm(dim=0) * v.norm()).clamp_min(1e-12)


def analogy_vector(W_E: torch.Tensor, a: int, b: int, c: int) -> torch.Tensor:
    """W_E[:, a] - W_E[:, b] + W_E[:, c] (d_model,): the column an analogy looks near ("king - man + woman")."""
    n_vocab = W_E.shape[1]
    for name, i in (("a", a), ("b", b), ("c", c)):
        if not 0 <= int(i) < n_vocab:
            raise ValueError(f"token id {name} = {i} is outside the vocabulary (0 to {n_vocab - 1})")
    return W_E[:, a] - W_E[:, b] + W_E[:, c]


@torch.no_grad()
def analogy(W_E: torch.Tensor, a: int, b: int, c: int, k: int = 5,
            among: torch.Tensor | None = None) -> list[tuple[int, float]]:
    """a - b + c: the ``k`` token ids whose columns are nearest (by cosine) to W_E[:, a] - W_E[:, b] + W_E[:, c],
    best first, as (id, cosine); a, b and c themselves are left out. ``among``: only these ids are candidates (a
    tokenizer's ordinary tokens, say). "king - man + woman": analogy(W_E, king, man, woman)."""
    n_vocab = W_E.shape[1]
    W = W_E.detach().float()
    cos = cosines(W, analogy_vector(W, a, b, c))
    allowed = torch.zeros(n_vocab, dtype=torch.bool)
    allowed[torch.arange(n_vocab) if among is None else torch.as_tensor(among)] = True
    allowed[[a, b, c]] = False
    cos = cos.masked_fill(~allowed, float("-inf"))
    top = cos.topk(min(k, int(allowed.sum())))
    return [(int(j), float(q)) for q, j in zip(top.values, top.indices)]
