"""Exercises of notebook 09: an induction-score detector (before the notebook scores its heads), the
loss on the repeat with heads ablated (before the notebook ablates them), and a sequence on which the
induction head is confidently wrong. Each check runs the learner's answer on cases the notebook does not
show and names the usual mistake."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch

from helpers.checks.base import ExerciseError, call, close, exercise, named, number_result, passed, tensor_result
from helpers.lessons.induction import ALPHABET, encode
from helpers.interp.ablation import ablated
from helpers.interp.loss import per_position_loss
from helpers.interp.scores import (duplicate_token_score, induction_mask, induction_score, pattern_score,
                                   previous_token_score)
from helpers.softmax import softmax


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return close(a, b, atol=1e-5, rtol=1e-5)


def _case(seed: int, n_heads: int = 3, n: int = 12, n_vocab: int = 5):
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(n_vocab, (n,), generator=g)
    S = torch.randn(n_heads, n, n, generator=g) * 2
    S = S.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), -math.inf)
    return softmax(S, dim=-1), tokens


SCORE_HELPERS = ("helpers.interp.scores.induction_score", "helpers.interp.scores.head_scores",
                 "helpers.interp.scores.induction_mask")


@exercise(answered_by=SCORE_HELPERS)
def check_induction_score(fn) -> bool:
    """fn(A (n_heads, n, n), tokens (n,)) -> (n_heads,): each head's induction score. The helpers that
    compute it (or its key mask) in one call are refused. A mistake is named when it explains the answer on every
    test case (two mistakes can give the same numbers on one case)."""
    what = named(fn, "induction_score", "(A, tokens)")
    runs = []
    for seed in range(4):
        A, tokens = _case(seed, n_heads=3 + seed % 2, n=12 + seed, n_vocab=5 + 4 * (seed % 2))  # 9: unique tokens
        if seed % 2:
            tokens[-1] = 9      # a last token that occurs nowhere else: it has no induction key, past or future
        right = induction_score(A, tokens)
        out = call(fn, A, tokens, what=what, forbid=SCORE_HELPERS)
        if isinstance(out, torch.Tensor) and out.numel() == 1 and right.numel() > 1:
            raise ExerciseError(f"{what} returned one number; it should score every head: shape ({len(A)},). "
                                "Average over queries (and keys), not over heads.")
        out = tensor_result(out, tuple(right.shape), what, "One score per head: A is (n_heads, n, n).")
        runs.append((A, tokens, out, right))
    wrong = [run for run in runs if not _close(run[2], run[3])]
    if not wrong:
        return passed(f"{what} matches helpers.interp.scores.induction_score on 4 random patterns.")
    for message, score in _INDUCTION_MISTAKES:
        if all(_close(out, score(A, tokens)) for A, tokens, out, _ in wrong):
            raise ExerciseError(f"{what} {message}")
    A, tokens, out, right = wrong[0]
    raise ExerciseError(f"{what} gives {[round(v, 4) for v in out.tolist()]} on a test case where the scores are "
                        f"{[round(v, 4) for v in right.tolist()]}. For each query i, sum A[h, i, j] over keys "
                        "j <= i with t_(j-1) = t_i; average over the queries that have such a key.")


def _shifted_keys(tokens: torch.Tensor, diagonal: int, roll: bool) -> torch.Tensor:
    """Keys j with t_(j+1) = t_i (one position too early), as the usual ways of writing it give them."""
    n = tokens.shape[-1]
    if roll:
        keys = tokens[:, None] == tokens.roll(-1)[None, :]   # torch.roll: the last key wraps round
    else:
        keys = torch.zeros(n, n, dtype=torch.bool)
        keys[:, :-1] = tokens[:, None] == tokens[None, 1:]
    return keys & torch.ones(n, n, dtype=torch.bool).tril(diagonal)


def _score_or_nan(A: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """pattern_score, or NaN when no query has such a key (then no answer can match it)."""
    return pattern_score(A, keys) if bool(keys.any()) else torch.full((A.shape[0],), math.nan)


def _every_j(tokens: torch.Tensor) -> torch.Tensor:
    """t_(j-1) = t_i for every key j, past or future (the mask without tril())."""
    n = tokens.shape[-1]
    keys = torch.zeros(n, n, dtype=torch.bool)
    keys[:, 1:] = tokens[:, None] == tokens[None, :-1]
    return keys


_INDUCTION_MISTAKES = [
    ("measures attention to earlier copies of the query's own token — that is a duplicate-token head. An induction "
     "head attends to the token *after* an earlier copy: key j with t_(j-1) = t_i.",
     lambda A, t: duplicate_token_score(A, t)),
    ("is the previous-token score (key j = i - 1). The induction keys depend on the tokens: j such that "
     "t_(j-1) = t_i.", lambda A, t: previous_token_score(A)),
    *[("looks one position too early: key j with t_(j+1) = t_i is the token *before* an earlier copy. Shift by "
       "one: t_(j-1) = t_i.", lambda A, t, d=d, r=r: _score_or_nan(A, _shifted_keys(t, d, r)))
      for r in (False, True) for d in (0, -1)],                      # hint 1's tril() or tril(-1); slicing or roll
    ("averages over every query, also those whose token never occurred before (they have no induction key and "
     "count as 0). Average only over queries that have at least one induction key.",
     lambda A, t: (A * induction_mask(t)).sum(-1).mean(-1)),
    ("also counts keys after the query (j > i): A gives them no weight, but they make a query look as if it had "
     "an induction key when it has none, and the average takes it in. Keep only j <= i: "
     "& torch.ones(n, n, dtype=torch.bool).tril().", lambda A, t: _score_or_nan(A, _every_j(t))),
    ("leaves out key j = i: when t_(i-1) = t_i (a token repeated at once), the query's own position follows an "
     "earlier copy too. Keep j <= i: tril() with the diagonal (diagonal=0).",
     lambda A, t: _score_or_nan(A, induction_mask(t) & torch.ones(t.shape[-1], t.shape[-1], dtype=torch.bool)
                                .tril(-1))),
    ("reads A the wrong way round: A[h, i, j] is query i's weight on key j (row = query). Sum over the last index, "
     "the keys.", lambda A, t: pattern_score(A.mT, induction_mask(t))),
]


def _random_two_layer_model():
    """A small untrained 2-layer model with large random weights (fixed seed), so that ablating any head
    changes its loss clearly (at the usual small initialisation a head's output is almost nothing)."""
    from helpers.lessons.induction import config
    from helpers.train import fresh_model

    model = fresh_model(config(n_layers=2), seed=7)
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for param in model.parameters():
            param.copy_(torch.randn(param.shape, generator=g) * 0.3)
    return model


@exercise(answered_by=())
def check_loss_without(fn) -> bool:
    """fn(model, tokens (batch, 2 half), heads [(layer, head), ...]) -> float: the mean loss of the
    predictions made in the repeated half, with those heads zero-ablated. Tried on a model and tokens the
    notebook does not use (and an odd batch), with no head, every single head, and a whole layer ablated.
    No helper computes it: ``repeat_loss`` measures the clean model, and is refused here so that the
    learner picks the repeat's predictions out of ``per_position_loss`` themselves."""
    from helpers.lessons.induction import probe_tokens

    what = named(fn, "loss_on_repeat_without", "(model, tokens, heads)")
    model, long = _random_two_layer_model(), probe_tokens(32, batch=3, seed=2024)
    H = model.cfg.n_heads
    cases = [(long, [])] + [(long, [(layer, h)]) for layer in range(model.cfg.n_layers) for h in range(H)]
    cases.append((long, [(1, h) for h in range(H)]))
    cases.append((probe_tokens(22, batch=2, seed=2025), [(0, 1)]))   # halves of 11, not 16: a half written in shows
    for tokens, heads in cases:
        half = tokens.shape[-1] // 2
        out = call(fn, model, tokens, heads, what=what, forbid=("helpers.lessons.induction.repeat_loss",))
        out = number_result(out, what)
        with ablated(model, heads=heads):
            loss = per_position_loss(model, tokens)          # (batch, n - 1): column i predicts token i + 1
        right = loss[:, half:].mean().item()
        if abs(out - right) < 1e-4:
            continue
        clean = per_position_loss(model, tokens)[:, half:].mean().item()   # (needed only to explain a mistake)
        if heads and abs(out - clean) < 1e-4:
            raise ExerciseError(f"{what} with heads = {heads} gives the *clean* loss {clean:.3f}: the ablation "
                                "did not take effect. Compute the loss inside `with ablated(model, heads=heads):`. "
                                f"(The loss is far above ln {model.cfg.n_vocab} = {math.log(model.cfg.n_vocab):.2f}, "
                                "a uniform guess, because the check's model has random, large weights: its "
                                "confident guesses are wrong. Only the change an ablation makes matters here.)")
        if abs(out - loss.mean().item()) < 1e-4:
            raise ExerciseError(f"{what} averages the loss over every position ({loss.mean().item():.3f}). Only the "
                                "predictions made in the second half can copy from the first.")
        if abs(out - loss[:, half - 1:].mean().item()) < 1e-4:
            raise ExerciseError(f"{what} includes column half - 1 of per_position_loss: that predicts the repeat's "
                                "*first* token, whose predecessor never occurred before — nothing to copy. Column i "
                                "predicts token i + 1: the repeat's predictions are columns half: .")
        with ablated(model, heads=heads):
            alone = per_position_loss(model, tokens[:, half:]).mean().item()
        if abs(out - alone) < 1e-4:     # the second half alone is the first half again: the same numbers
            raise ExerciseError(f"{what} measures the first half, or runs the model on the second half alone (the "
                                "same tokens, so the same number): either way there is nothing earlier to copy "
                                "from. Run the model on all the tokens, then keep the repeat's predictions, "
                                "columns half: of per_position_loss.")
        if abs(out - loss[:, : half - 1].mean().item()) < 1e-4 or abs(out - loss[:, :half].mean().item()) < 1e-4:
            raise ExerciseError(f"{what} measured the first half (nothing to copy there); the repeat is the second.")
        if abs(out - loss.mean(0)[half:].sum().item()) < 1e-3 or abs(out - loss[:, half:].sum().item()) < 1e-3:
            raise ExerciseError(f"{what} sums the losses; the mean loss per prediction is asked for (nats per token).")
        if tokens is not long:
            raise ExerciseError(f"{what} is right on sequences of 2 x 16 tokens but not on 2 x 11 (heads = {heads}: "
                                f"{out:.3f}, expected {right:.3f}): is the half length written into the code? Take "
                                "it from the tokens: half = tokens.shape[-1] // 2.")
        raise ExerciseError(f"{what} with heads = {heads} gives {out:.3f}; expected {right:.3f}: the mean of "
                            "per_position_loss(model, tokens)[:, half:] with those heads zero-ablated.")
    return passed(f"{what} is right with no head, each of the {len(cases) - 3} heads and a whole layer ablated, "
                  "on repeats of two lengths.")


# Exercise 9.3 is graded on shipped models, not on the one the learner's notebook trained: a model trained live
# differs from CPU to CPU (another CPU rounds the last bit differently, and training amplifies it), so a text that
# fools one live model can fail on another, and nbgrader re-running a notebook on the grader's machine would grade
# another model. These three are notebook 09's recipe with seeds 0-2 (tools/train_models.py, INDUCTION), the same
# file on every machine. A text passes when it fools at least two of them: one copy's quirk can't fail a right idea.
REFERENCE_MODELS = ("induction_s0", "induction_s1", "induction_s2")
FOOLED_NEEDED = 2


@functools.lru_cache(maxsize=1)
def reference_models() -> tuple:
    """The shipped copies of notebook 09's model (its recipe, seeds 0-2) that exercise 9.3 is checked on."""
    from helpers.model import checkpoint

    return tuple(checkpoint.load_named(name)[0] for name in REFERENCE_MODELS)


@dataclass(frozen=True)
class _Mistake:
    """What one model does after a text: its guess, that guess's probability, and the same probability with
    the model's induction heads zero-ablated."""

    guess: str
    p: float
    p_without: float

    def fooled(self, truth: str) -> bool:
        return self.guess != truth and self.p > 0.5 and self.p_without <= 0.5

    def describe(self) -> str:
        return f"guess {self.guess!r} with p = {self.p:.2f}, p({self.guess!r}) = {self.p_without:.2f} without its " \
               "induction heads"


def _mistake(model, ids: torch.Tensor) -> _Mistake:
    with torch.no_grad():
        p = softmax(model(ids)[:, -1], dim=0)
        guess = int(p.argmax())
        with ablated(model, heads=induction_heads_of(model)):
            p_without = float(softmax(model(ids)[:, -1], dim=0)[guess])
    return _Mistake(ALPHABET[guess], float(p[guess]), p_without)


@exercise(answered_by=())
def check_confident_mistake(fn, model=None) -> bool:
    """fn() -> (text, truth): after ``text`` notebook 09's model should predict a wrong token (not ``truth``) with
    p > 0.5, and the mistake must be the induction heads' doing: with them ablated the wrong guess loses its
    confidence. Judged on the shipped ``reference_models()`` (at least ``FOOLED_NEEDED`` of them fooled), so the
    verdict is the same on every machine; ``model`` (the learner's own, trained live) is only reported."""
    answer = call(fn, what=named(fn, "fooling_sequence", "()"))
    if not (isinstance(answer, tuple) and len(answer) == 2 and all(isinstance(a, str) for a in answer)):
        raise ExerciseError("fooling_sequence() should return two strings: (text, truth)")
    text, truth = answer
    if len(truth) != 1:
        raise ExerciseError(f"truth should be one character (the token that really comes next), got {truth!r}")
    references = reference_models()
    try:
        ids = encode(text, references[0].cfg.n_ctx)
        encode(truth)
    except ValueError as e:
        raise ExerciseError(str(e)) from None
    flat = ids.flatten().tolist()
    copies = {ALPHABET[flat[k + 1]] for k in range(len(flat) - 1) if flat[k] == flat[-1]}
    if not copies:
        raise ExerciseError(f"In {text!r} the last token {ALPHABET[flat[-1]]!r} occurs nowhere earlier, so there is "
                            "nothing for an induction head to copy: whatever the model guesses, it is not copying "
                            "'what came next last time'. Put the last token earlier in the text, followed by the "
                            "token you want the model to copy.")
    period = next((P for P in range(1, len(text) // 2 + 1) if text[P:] == text[:-P]), None)
    if period is not None and truth != text[len(text) - period]:
        nxt = text[len(text) - period]
        raise ExerciseError(f"{text!r} is {text[:period]!r} repeated, so the text itself says {nxt!r} comes next: a "
                            f"model that copies {nxt!r} is right, and nothing in the text stands behind {truth!r}. A "
                            "mistake needs a text in which what really comes next differs from what came next last "
                            "time — a word that starts like an earlier one but is another word.")
    seen = [_mistake(m, ids) for m in references]
    lines = "\n".join(f"  copy {i + 1} (seed {name[-1]}): {m.describe()}" for i, (name, m) in
                      enumerate(zip(REFERENCE_MODELS, seen)))
    how = (f"The check runs your text on {len(references)} copies of this notebook's model, trained with its recipe "
           f"(seeds 0-{len(references) - 1}) and shipped with the series, so that every machine grades alike:\n{lines}")
    if model is not None and hasattr(model, "cfg") and model is not references[0]:
        try:
            own = _mistake(model, ids)
            how += f"\n  your `model` (trained in this notebook, not graded): {own.describe()}"
        except Exception:  # the learner's model is only reported; a broken one must not hide the verdict
            pass
    fooled = sum(m.fooled(truth) and m.guess in copies for m in seen)   # fooled by a copy, not by anything else
    if fooled >= FOOLED_NEEDED:
        return passed(f"After {text!r} (the truth is {truth!r}) {fooled} of the {len(seen)} copies make a confident "
                      f"mistake that their induction heads cause.\n{how}")
    right = sum(m.guess == truth for m in seen)
    unsure = sum(m.guess != truth and m.p <= 0.5 for m in seen)
    not_copied = sum(m.fooled(truth) and m.guess not in copies for m in seen)
    if not_copied and fooled + not_copied >= FOOLED_NEEDED:
        why = (f"After {text!r} the model's confident wrong guess is not one of the tokens that followed an earlier "
               f"{ALPHABET[flat[-1]]!r} ({', '.join(map(repr, sorted(copies)))}), so it is not a copy. Make the "
               "token you want copied follow the earlier occurrences of the last token.")
    elif right >= FOOLED_NEEDED:
        why = (f"After {text!r} the model predicts {truth!r} — it is right. Build a sequence where copying from an "
               "earlier occurrence gives the wrong answer.")
    elif right + unsure >= FOOLED_NEEDED:
        why = (f"After {text!r} the model's guess is wrong but not confident (p <= 0.5 or right in "
               f"{right + unsure} of {len(seen)} copies). Make the last token occur earlier, followed by the token "
               "you want it to copy — the more often that pair occurred, the surer the copy.")
    else:
        why = (f"After {text!r} the model makes a confident mistake, but it still does without its induction heads: "
               "this mistake is not the induction heads' doing (a guess from single-token statistics?).")
    raise ExerciseError(f"{why} It must fool at least {FOOLED_NEEDED} of the {len(seen)} copies.\n{how}")


def induction_heads_of(model, threshold: float = 0.5) -> list[tuple[int, int]]:
    """The (last layer, head) pairs whose induction score on a repeated probe passes ``threshold``."""
    from helpers.lessons.induction import probe_tokens
    from helpers.interp.scores import head_scores

    s = head_scores(model, probe_tokens(model.cfg.n_ctx), which=("induction",))["induction"][-1]
    return [(model.cfg.n_layers - 1, h) for h in range(len(s)) if float(s[h]) > threshold]
