"""Notebook 01 exercises: turn bigram counts into a bigram table (columns that sum to 1); the held-out
cross-entropy of a table; add-k smoothing scored on held-out text."""

from __future__ import annotations

import math

import torch

from helpers.checks.base import (ExerciseError, as_tensor, call, close, exercise, expect_shape, named, number_result,
                                 passed)
# counts C[b, a] = how often b follows a; token 3 is never followed by anything
_C = torch.tensor([[0.0, 2.0, 1.0, 0.0],
                   [4.0, 0.0, 1.0, 0.0],
                   [0.0, 6.0, 0.0, 0.0],
                   [4.0, 0.0, 2.0, 0.0]])


@exercise(answered_by=("helpers.ngrams.normalize_columns",))
def check_bigram_table(fn) -> bool:
    """``fn(C)`` takes counts C[b, a] (b follows a), shape (n_vocab, n_vocab), and must return
    P with P[:, a] the probability of each next token after a: every seen column sums to 1."""
    what = named(fn, "normalize", "(C)")
    out = as_tensor(call(fn, _C.clone(), what=what, forbid=("helpers.ngrams.normalize_columns",)),
                    what)   # (call also refuses an answer that changes C in place)
    expect_shape(out, tuple(_C.shape), what, "The table has one row and one column per token.")
    out = out.double()
    if torch.isnan(out).any():
        raise ExerciseError(f"{what} contains NaN. Token 3 is never followed by anything, so its column "
                            "of counts sums to 0 and 0/0 = NaN: leave such a column at zero "
                            "(e.g. divide by sums.clamp(min=1e-12)).")
    if (out < 0).any():
        raise ExerciseError(f"{what} has negative entries; probabilities cannot be negative.")
    col, row = out.sum(0), out.sum(1)
    C64 = _C.double()
    totals = C64.sum(0, keepdim=True).clamp(min=1e-12)
    if close(out, torch.div(C64, totals, rounding_mode="floor"), rtol=1e-5):
        raise ExerciseError(f"{what} used whole-number division (//): it throws the fractions away, so almost every "
                            "probability became 0. Divide with /.")
    if close(out, (C64 / C64.sum(1, keepdim=True).clamp(min=1e-12)).T, rtol=1e-5):
        raise ExerciseError(f"{what} normalised each *row* and then transposed the result. In the post's convention "
                            "P[b, a] = C[b, a] / (total of column a): normalise the columns of C as it is, no "
                            "transpose.")
    if close(out, torch.softmax(C64, dim=0), rtol=1e-5) or close(out, torch.softmax(C64, dim=1), rtol=1e-5):
        raise ExerciseError(f"{what} took a softmax of the counts: exp(count) makes a pair seen 3 times e^3 = 20 "
                            "times likelier than one seen once, not 3 times. A probability here is a count divided "
                            "by its column's total.")
    if close(out, C64, rtol=1e-5):
        raise ExerciseError(f"{what} returned the counts unchanged: divide each column by its total.")
    seen = _C.sum(0) > 0
    if not close(col[seen], torch.ones(int(seen.sum()), dtype=out.dtype), atol=1e-5, rtol=1e-5):
        if close(row[_C.sum(1) > 0], torch.ones(int((_C.sum(1) > 0).sum()), dtype=out.dtype), atol=1e-5, rtol=1e-5):
            raise ExerciseError(f"The rows of {what} sum to 1, but in the post's convention each *column* is a "
                                "distribution: P[:, a] is what comes after token a. Normalise over dim 0.")
        if torch.isclose(out.sum(), torch.tensor(1.0, dtype=out.dtype)):
            raise ExerciseError(f"The whole table of {what} sums to 1 (a joint distribution of pairs). "
                                "We want the next token *given* the previous one: each column on its own sums to 1.")
        raise ExerciseError(f"The columns of {what} sum to {col.tolist()}, not 1.")
    if out[:, ~seen].abs().sum() > 0:
        raise ExerciseError(f"{what}: token 3 was never followed by anything; leave its column at zero "
                            "(there is nothing to count) rather than inventing probabilities.")
    if not close(out, C64 / totals, atol=1e-5, rtol=1e-5):
        raise ExerciseError(f"Each column of {what} sums to 1 but the entries are not counts / column total.")
    return passed("Correct: P[:, a] = C[:, a] / sum_b C[b, a], and an unseen token's column stays zero.")


# ---------------------------------------------------------------------------------------------------------
# Exercise 1.2: held-out cross-entropy of a bigram table


def _random_table(n_vocab: int, seed: int) -> torch.Tensor:
    """A bigram table with every entry positive (so no -log 0), columns summing to 1."""
    g = torch.Generator().manual_seed(seed)
    T = torch.rand(n_vocab, n_vocab, generator=g, dtype=torch.float64) + 0.05
    return T / T.sum(0, keepdim=True)


def _random_ids(n_vocab: int, length: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, n_vocab, (length,), generator=g)


def _ce(P: torch.Tensor, ids: torch.Tensor) -> float:
    return float(-torch.log(P.double()[ids[1:], ids[:-1]]).mean())


@exercise(answered_by=("helpers.ngrams.cross_entropy",))
def check_heldout_cross_entropy(fn) -> bool:
    """``fn(P, ids)`` takes a bigram table P (columns: P[:, a] = next-token distribution after a) and a
    token stream, and must return the mean of -ln P[next, previous] over its len(ids) - 1 predictions."""
    what = named(fn, "heldout_cross_entropy", "(P, ids)")
    forbid = ("helpers.ngrams.cross_entropy",)
    P, ids = _random_table(3, 0).float(), torch.tensor([0, 2, 1, 1, 0])
    first = number_result(call(fn, P, ids, what=what, forbid=forbid), what)  # (call: no change to P or ids)
    cases = [(P, ids, first)]
    for n_vocab, length, seed in ((5, 40, 1), (7, 13, 2), (2, 9, 3)):  # odd sizes the notebook never uses
        P_, ids_ = _random_table(n_vocab, seed).float(), _random_ids(n_vocab, length, seed)
        cases.append((P_, ids_, number_result(call(fn, P_, ids_.clone(), what=what, forbid=forbid), what)))
    for P_, ids_, got in cases:
        want = _ce(P_, ids_)
        if abs(got - want) < 1e-4:
            continue
        p_actual = P_.double()[ids_[1:], ids_[:-1]]
        logp = torch.log(p_actual)
        if abs(got + want) < 1e-4:
            raise ExerciseError(f"{what} is negative ({got:.4f}): the cross-entropy is the mean of *minus* "
                                "ln p, a positive number (ln of a probability is never above 0).")
        if abs(got - _ce(P_.T, ids_)) < 1e-4:
            raise ExerciseError(f"{what} reads the table the wrong way round: P[previous, next]. In the post's "
                                "convention column a is the distribution after a, so the probability of "
                                "b after a is P[b, a] = P[ids[1:], ids[:-1]].")
        if abs(got - float(-logp.sum())) < 1e-4:
            raise ExerciseError(f"{what} returns the *sum* of -ln p over the text; the cross-entropy is the "
                                "mean (nats per token), so texts of different lengths compare.")
        if abs(got - float(-logp.sum()) / len(ids_)) < 1e-4:
            raise ExerciseError(f"{what} divides by len(ids), but a text of len(ids) tokens has only "
                                "len(ids) - 1 predictions (the first token has no previous one).")
        if abs(got - want / math.log(2)) < 1e-4 or abs(got - want / math.log(10)) < 1e-4:
            raise ExerciseError(f"{what} uses log base 2 or 10; the series measures in nats, the natural "
                                "log (torch.log).")
        if abs(got - float(-torch.log(p_actual.mean()))) < 1e-4:
            raise ExerciseError(f"{what} takes the log of the mean probability; the cross-entropy is the mean of "
                                "-ln p, one log per prediction, then the mean: -torch.log(p).mean().")
        if abs(got - math.exp(want)) < 1e-3:
            raise ExerciseError(f"{what} returns the perplexity e^(cross-entropy); return the cross-entropy itself.")
        raise ExerciseError(f"{what} gave {got:.4f} for a {P_.shape[0]}-token table and a text of "
                            f"{len(ids_)} tokens, expected {want:.4f} (the mean of -ln P[next, previous]).")
    return passed("Correct: the mean of -ln P[next, previous] over the len(ids) - 1 predictions, in nats.")


# ---------------------------------------------------------------------------------------------------------
# Exercise 1.3: add-k smoothing and its held-out loss


def _add_k(C: torch.Tensor, k: float) -> torch.Tensor:
    n_vocab = C.shape[0]
    return (C + k) / (C.sum(0, keepdim=True) + k * n_vocab)


def _counts(ids: torch.Tensor, n_vocab: int) -> torch.Tensor:
    C = torch.zeros(n_vocab, n_vocab, dtype=torch.float64)
    C.index_put_((ids[1:], ids[:-1]), torch.ones(len(ids) - 1, dtype=torch.float64), accumulate=True)
    return C


def _ce_k_with_vocab(C: torch.Tensor, k: float, m: int, ids: torch.Tensor) -> float:
    """Add-k with k * m in the denominator instead of k * n_vocab (the vocabulary counted from the texts)."""
    return _ce((C + k) / (C.sum(0, keepdim=True) + k * m), ids)


@exercise(answered_by=())
def check_add_k_loss(fn) -> bool:
    """``fn(train_ids, heldout_ids, n_vocab, k)`` must count bigrams on the training text, smooth them
    with add-k, P[b, a] = (C[b, a] + k) / (sum_b' C[b', a] + k n_vocab), and return the held-out
    cross-entropy of that table (nats per token)."""
    what = named(fn, "add_k_loss", "(train_ids, heldout_ids, n_vocab, k)")
    # hidden corpora: a tiny vocabulary, a training text that misses some pairs the held-out text has
    cases = [(_random_ids(4, 30, 10), _random_ids(4, 12, 11), 4, 1.0),
             (_random_ids(6, 50, 12), _random_ids(6, 20, 13), 6, 0.1),
             (_random_ids(5, 25, 14), _random_ids(5, 30, 15), 5, 0.01),
             (torch.tensor([0, 1, 0, 1, 0, 1, 0]), torch.tensor([1, 2, 2, 0]), 3, 0.5),  # token 2 never seen
             (_random_ids(4, 40, 16), _random_ids(4, 15, 17), 7, 0.2)]  # tokens 4-6 in neither text
    for train, heldout, n_vocab, k in cases:
        got = number_result(call(fn, train, heldout, n_vocab, k, what=what), what)  # (call: streams unchanged)
        C, Ch = _counts(train, n_vocab), _counts(heldout, n_vocab)
        want = _ce(_add_k(C, k), heldout)
        if abs(got - want) < 1e-4:
            continue
        where = f"(n_vocab = {n_vocab}, k = {k}, {len(train)} training and {len(heldout)} held-out tokens)"
        near = lambda value: abs(got - value) < 1e-4  # noqa: E731
        if near(_ce(_add_k(C, 1.0), heldout)) and k != 1.0:
            raise ExerciseError(f"{what} gives the loss of add-1 whatever k is {where}: use the k it is given.")
        fixed = [k_ for k_ in (0.5, 0.1, 0.01, 0.001) if k_ != k and near(_ce(_add_k(C, k_), heldout))]
        if fixed:
            raise ExerciseError(f"{what} gives the loss of k = {fixed[0]} whatever k is {where}: is k written into the "
                                "code? Use the k it is given.")
        if near(_ce(_add_k(C.T, k).T, heldout)):
            raise ExerciseError(f"{what} normalises the smoothed counts over *rows* {where}. In the post's "
                                "convention column a is the distribution after a: divide each column by its "
                                "own total, sum over dim 0.")
        if near(_ce(_add_k(C, k).T, heldout)):
            raise ExerciseError(f"{what} reads the table the wrong way round {where}: the probability of b "
                                "after a is P[b, a] (next token = row, previous token = column).")
        if near(_ce((C + k) / C.sum(0, keepdim=True).clamp(min=1e-12), heldout)):
            raise ExerciseError(f"{what} adds k to the counts but not to their totals {where}, so the columns "
                                "sum to more than 1. Each column gains k for each of the n_vocab tokens: "
                                "divide by (column total + k * n_vocab).")
        if near(_ce((C + k) / (C.sum(0, keepdim=True) + k), heldout)):
            raise ExerciseError(f"{what} adds k once to each column's total {where}, but k was added to "
                                "n_vocab counts in that column: the total grows by k * n_vocab.")
        if near(_ce(_add_k(Ch, k), heldout)) or near(_ce(_add_k(_counts(torch.cat([train, heldout]), n_vocab), k),
                                                                heldout)):
            raise ExerciseError(f"{what} counts pairs of the held-out text {where}. The table must come from "
                                "the training text alone; the held-out text only scores it.")
        used = {int(max(train.max(), heldout.max())) + 1, int(train.max()) + 1,
                len(set(train.tolist())), len(set(train.tolist()) | set(heldout.tolist()))} - {n_vocab}
        if any(near(_ce_k_with_vocab(C, k, m, heldout)) for m in used):
            raise ExerciseError(f"{what} takes the vocabulary size from the texts {where}: it adds k for only the "
                                "tokens that occur in them. Use the n_vocab it is given: a column gains k for "
                                "every token of the vocabulary, also those neither text contains.")
        if near(_ce(_add_k(C, k), heldout) * (len(heldout) - 1)):
            raise ExerciseError(f"{what} returns the total -ln p over the held-out text {where}; return the "
                                "mean per prediction (nats per token).")
        raise ExerciseError(f"{what} gave {got:.4f} {where}, expected {want:.4f}.")
    return passed("Correct: (C + k) / (column total + k n_vocab) never gives 0, so every held-out pair gets "
                  "a finite loss.")
