"""Head scores: how much of its attention a head puts where a known kind of head would.

Each score is defined by a set of (query i, key j) pairs — a boolean mask (..., n, n), row i =
query i, column j = key j, as in the post's A. For every query that has at least one such key, the
head's weight on those keys is summed (a number in [0, 1]); the score is the mean over those queries
(and over the texts of a batch). Queries with no such key are left out.

previous-token   key j = i - 1: the token just before the query (every query but the first).
duplicate-token  keys j < i with t_j = t_i: earlier occurrences of the query's own token.
induction        keys j <= i with t_{j-1} = t_i: the token right *after* an earlier occurrence of the
                 query's token — [A][B] ... [A] attends to [B], whose value says what came next last time.

The definitions follow "A Mathematical Framework for Transformer Circuits" (Elhage et al. 2021) and
"In-context Learning and Induction Heads" (Olsson et al. 2022); on [random half][same half again]
(``helpers.interp.sequences``) the induction keys of the second half are exactly the diagonal
j = i - half + 1 used there. A high score is a description, not yet evidence: pair it with an
ablation (``helpers.interp.ablation``).
"""

from __future__ import annotations

import torch

from helpers.interp.validate import batch_of_tokens
from helpers.model import names
from helpers.model.transformer import Transformer


def previous_token_mask(n: int) -> torch.Tensor:
    """(n, n) bool: True at (i, i - 1)."""
    return torch.ones(n, n, dtype=torch.bool).tril(-1) & ~torch.ones(n, n, dtype=torch.bool).tril(-2)


def duplicate_token_mask(tokens: torch.Tensor) -> torch.Tensor:
    """tokens (..., n) -> (..., n, n) bool: True at (i, j) when j < i and t_j = t_i."""
    n = tokens.shape[-1]
    same = tokens[..., :, None] == tokens[..., None, :]
    return same & torch.ones(n, n, dtype=torch.bool).tril(-1)


def induction_mask(tokens: torch.Tensor) -> torch.Tensor:
    """tokens (..., n) -> (..., n, n) bool: True at (i, j) when 1 <= j <= i and t_{j-1} = t_i
    (positions from 0): key j follows an earlier occurrence of the query's token."""
    n = tokens.shape[-1]
    mask = torch.zeros(*tokens.shape, n, dtype=torch.bool)
    mask[..., 1:] = tokens[..., :, None] == tokens[..., None, :-1]  # column j compares t_i with t_{j-1}
    return mask & torch.ones(n, n, dtype=torch.bool).tril(0)


def pattern_score(A: torch.Tensor, mask: torch.Tensor, what: str = "this score") -> torch.Tensor:
    """A (..., n_heads, n, n) patterns, mask (..., n, n) bool -> (n_heads,): for every query row with
    at least one True key, the weight on those keys; averaged over such rows and the batch."""
    if A.dim() < 3 or A.shape[-1] != A.shape[-2] or mask.shape[-2:] != A.shape[-2:]:
        raise ValueError(f"A must be (..., n_heads, n, n) and the mask (..., n, n) for the same n; "
                         f"got {tuple(A.shape)} and {tuple(mask.shape)}")
    weight = (A * mask.unsqueeze(-3)).sum(-1)  # (..., n_heads, n): each query's weight on its keys of this kind
    rows = mask.any(-1).unsqueeze(-2).expand_as(weight)  # (..., n_heads, n): queries that have such a key
    if not bool(rows.any()):
        raise ValueError(f"no query has a key for {what} in these tokens")
    weight = weight.movedim(-2, 0).reshape(A.shape[-3], -1)  # (n_heads, batch * n)
    rows = rows.movedim(-2, 0).reshape(A.shape[-3], -1).float()
    return (weight * rows).sum(-1) / rows.sum(-1)


def previous_token_score(A: torch.Tensor) -> torch.Tensor:
    """A (..., n_heads, n, n) -> (n_heads,): mean weight of query i on key i - 1 (queries 2 ... n)."""
    if A.shape[-1] < 2:
        raise ValueError("the previous-token score needs n >= 2 tokens: the first one has no previous token")
    return pattern_score(A, previous_token_mask(A.shape[-1]), "the previous-token score")


def duplicate_token_score(A: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """A (..., n_heads, n, n), tokens (..., n) -> (n_heads,): weight on earlier copies of the query's token."""
    mask = duplicate_token_mask(torch.as_tensor(tokens))
    if not bool(mask.any()):
        raise ValueError("no token occurs twice in these tokens, so no query has an earlier duplicate: "
                         "use a sequence that repeats (helpers.interp.sequences.repeated_tokens)")
    return pattern_score(A, mask, "the duplicate-token score")


def induction_score(A: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """A (..., n_heads, n, n), tokens (..., n) -> (n_heads,): weight on the token after an earlier
    occurrence of the query's token."""
    mask = induction_mask(torch.as_tensor(tokens))
    if not bool(mask.any()):
        raise ValueError("no token occurs twice in these tokens, so there is nothing for an induction head to "
                         "attend to: use a sequence that repeats (helpers.interp.sequences.repeated_tokens)")
    return pattern_score(A, mask, "the induction score")


SCORES = ("previous", "duplicate", "induction")


@torch.no_grad()
def head_scores(model: Transformer, tokens, which: tuple[str, ...] = SCORES) -> dict[str, torch.Tensor]:
    """Scores of every head on tokens (n,) or (batch, n): {"previous": (n_layers, n_heads), "duplicate": ...,
    "induction": ...} (the ones in ``which``), each as defined in this module's docstring."""
    unknown = [w for w in which if w not in SCORES]
    if unknown:
        raise ValueError(f"unknown score(s) {unknown}; choose from {list(SCORES)}")
    if model.cfg.n_layers == 0:
        raise ValueError("this model has n_layers = 0 (the post's zero-layer Transformer): no heads to score")
    ids, _ = batch_of_tokens(model, tokens)
    cache = model.activations(ids, [names.key(layer, "A") for layer in range(model.cfg.n_layers)])
    fns = {"previous": lambda A: previous_token_score(A), "duplicate": lambda A: duplicate_token_score(A, ids),
           "induction": lambda A: induction_score(A, ids)}
    return {w: torch.stack([fns[w](cache[names.key(layer, "A")]) for layer in range(model.cfg.n_layers)])
            for w in which}
