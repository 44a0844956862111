"""The exercise checks of notebooks 01-02 accept right answers and explain typical wrong ones."""

import pytest

from helpers import checks
from helpers.checks import ExerciseError
from helpers.ngrams import normalize_columns
from helpers.softmax import softmax


def test_bigram_table_right_answer():
    assert checks.check_bigram_table(lambda C: C / C.sum(0, keepdim=True).clamp(min=1e-12))
    with pytest.raises(ExerciseError, match="calls helpers.ngrams.normalize_columns, which does the whole"):
        checks.check_bigram_table(normalize_columns)


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
])
def test_softmax_wrong_answers_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        checks.check_softmax(wrong)
