"""The exercise checks of notebooks 01-02 accept right answers and explain typical wrong ones."""

import pytest
import torch

from helpers import checks
from helpers.checks import ExerciseError
from helpers.ngrams import normalize_columns
from helpers.softmax import softmax


def test_bigram_table_right_answer():
    assert checks.check_bigram_table(lambda C: C / C.sum(0, keepdim=True).clamp(min=1e-12))
    with pytest.raises(ExerciseError, match="calls helpers.ngrams.normalize_columns, which does the whole"):
        checks.check_bigram_table(normalize_columns)


def uniform_where_unseen(C):
    """Invents a distribution (uniform) after a token that was never followed by anything."""
    P = C / C.sum(0, keepdim=True).clamp(min=1e-12)
    P[:, C.sum(0) == 0] = 1 / C.shape[0]
    return P


def smoothed(C):
    """Add-one smoothing where the exercise asks for plain counts / column total."""
    P = (C + 1) / (C + 1).sum(0, keepdim=True)
    P[:, C.sum(0) == 0] = 0.0
    return P


@pytest.mark.parametrize("wrong, message", [
    (lambda C: C / C.sum(1, keepdim=True).clamp(min=1e-12), r"each \*column\* is a distribution"),
    (lambda C: C / C.sum(0, keepdim=True), "NaN"),
    (lambda C: C, "unchanged"),
    (lambda C: C / C.sum(), "whole table"),
    (lambda C: C // C.sum(0, keepdim=True).clamp(min=1), r"whole-number division \(//\)"),
    (lambda C: (C / C.sum(1, keepdim=True).clamp(min=1e-12)).T, r"each \*row\* and then transposed"),
    (lambda C: C.softmax(0), "softmax of the counts"),
    (lambda C: (C / C.sum(0, keepdim=True).clamp(min=1e-12))[:2], "shape"),
    (lambda C: C.div_(C.sum(0, keepdim=True).clamp(min=1e-12)), "in place"),
    (lambda C: "nope", "should return a tensor"),
    (lambda C: 1 / 0, "ZeroDivisionError"),
    (lambda C: C / C.sum(0, keepdim=True).clamp(min=1e-12) - 0.1, "negative entries"),
    (lambda C: uniform_where_unseen(C), "leave its column at zero"),
    (lambda C: smoothed(C), "not counts / column total"),
    (lambda C: C / C.sum(0, keepdim=True).clamp(min=1e-12) * 0.9, r"The columns of .* sum to \["),
])
def test_bigram_table_wrong_answers_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_bigram_table(wrong)


def test_not_implemented_says_so():
    def todo(C):
        raise NotImplementedError
    with pytest.raises(ExerciseError, match="not written yet"):
        checks.check_bigram_table(todo)


def by_hand(x, dim=0):
    e = (x - x.max(dim=dim, keepdim=True).values).exp()
    return e / e.sum(dim=dim, keepdim=True)


def test_softmax_right_answer():
    assert checks.check_softmax(by_hand)


def test_softmax_helper_is_refused():
    with pytest.raises(ExerciseError, match="calls helpers.softmax.softmax"):
        checks.check_softmax(lambda x: softmax(x, dim=0))


@pytest.mark.parametrize("wrong, message", [
    (lambda x: x.exp() / x.exp().sum(0), "overflows"),
    (lambda x: by_hand(x, dim=1), r"each \*row\*"),
    (lambda x: x.exp(), "forgot to divide"),
    (lambda x: by_hand(x.flatten()).reshape(x.shape), "whole matrix"),
    (lambda x: by_hand(x)[:, :1], "shape"),
    (lambda x: by_hand(x) - 0.5, "positive everywhere"),
    (lambda x: by_hand(x) if x.abs().max() < 500 else torch.zeros_like(x), r"expected \[0.2689, 0.7311\]"),
    (lambda x: by_hand(torch.nan_to_num(x, neginf=0.0)), r"exp\(-inf\) = 0"),        # -inf "tidied" to 0
    (lambda x: by_hand(x.squeeze()).reshape(x.shape), r"random logits of shape \(1, 4\)"),  # a (1, n) squeezed
])
def test_softmax_wrong_answers_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_softmax(wrong)
