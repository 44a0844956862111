"""Notebook 09's helpers (helpers/lessons/induction.py): the repeating data, the character tokens, the repeat loss and
training with snapshots."""

from __future__ import annotations

import pytest
import torch

from helpers.lessons.induction import (ALPHABET, N_VOCAB, config, copy_batch, copy_by_position, decode, encode, pair_at,
                               periodic_batch, probe_tokens, repeat_loss, train_induction)
from helpers.interp.loss import per_position_loss
from helpers.train import fresh_model


def test_the_earlier_layout_repeats_from_position_0_with_a_period_of_4_to_16():
    rows = periodic_batch(64, 33, torch.Generator().manual_seed(3))
    assert rows.shape == (64, 33) and int(rows.max()) < N_VOCAB
    for row in rows:
        periods = [P for P in range(4, 17) if torch.equal(row[P:], row[:-P])]
        assert periods, f"row {decode(row)!r} does not repeat with a period of 4-16"
    again = periodic_batch(64, 33, torch.Generator().manual_seed(3))
    assert torch.equal(rows, again)


def test_every_marked_token_is_what_copying_predicts_and_copies_sit_anywhere():
    tokens, copied = copy_batch(256, 33, torch.Generator().manual_seed(3))
    assert tokens.shape == copied.shape == (256, 33) and copied.dtype == torch.bool and int(tokens.max()) < N_VOCAB
    assert not copied[:, :2].any()                     # a copy needs an earlier pair
    earliest_keys = []
    for row, marks in zip(tokens.tolist(), copied.tolist()):
        for i in (i for i, m in enumerate(marks) if m):
            keys = [j for j in range(1, i - 1) if row[j - 1] == row[i - 1] and row[j] == row[i]]
            assert keys, f"token {i} of {decode(row)!r} is marked but no earlier pair predicts it"
            earliest_keys.append(keys[0])
    repeats, planted = copied[:128], copied[128:]
    assert all(bool(r.any()) for r in repeats)         # every repeat row repeats its segment at least once
    assert all(0 < int(r.sum()) <= 3 for r in planted)  # up to three planted pairs (one written over drops out)
    assert min(earliest_keys) == 1 and max(earliest_keys) >= 30   # the only earlier copy can sit anywhere
    again, copied_again = copy_batch(256, 33, torch.Generator().manual_seed(3))
    assert torch.equal(tokens, again) and torch.equal(copied, copied_again)


def test_copy_by_position_is_the_probability_of_b_after_the_pair_at_k():
    tokens, B = pair_at(5, 32, batch=4)
    assert tokens.shape == (4, 32) and torch.equal(tokens[:, -1], tokens[:, 5]) and torch.equal(B, tokens[:, 6])
    assert all(len(set(r[:-1].tolist())) == 31 for r in tokens)   # no other earlier copy of A to confuse it
    with pytest.raises(ValueError, match="0 <= k <= 29"):
        pair_at(30, 32)
    from helpers.lessons import by_hand

    hand = by_hand.from_circuits(*by_hand.induction_circuits(by_hand.Layout()))   # notebook 10's circuit by hand
    assert float(copy_by_position(hand)[1:].min()) > 0.9            # copies from every k but the first position
    untrained = copy_by_position(fresh_model(config(), seed=0))
    assert untrained.shape == (30,) and float(untrained.max()) < 0.05   # about 1/64: a guess


def test_characters_are_tokens_and_bad_text_is_named():
    assert len(ALPHABET) == N_VOCAB == 64 == config().n_vocab
    assert decode(encode("Mr and Mrs D. 42")) == "Mr and Mrs D. 42"
    with pytest.raises(ValueError, match="empty"):
        encode("")
    with pytest.raises(ValueError, match=r"'%!' are not tokens"):
        encode("50%!")
    with pytest.raises(ValueError, match="n = 40 tokens but the model's n_ctx is 32"):
        encode("a" * 40, n_ctx=32)


def test_repeat_loss_splits_the_predictions_at_the_repeat():
    model = fresh_model(config(), seed=1)
    tokens = probe_tokens(32, batch=3)
    assert torch.equal(tokens[:, :16], tokens[:, 16:])
    L = per_position_loss(model, tokens)  # (3, 31): position i predicts token i + 1
    first, repeat = repeat_loss(model, tokens)
    assert first == pytest.approx(float(L[:, :15].mean()), abs=1e-6)  # tokens 2..16: nothing to copy yet
    assert repeat == pytest.approx(float(L[:, 16:].mean()), abs=1e-6)  # tokens 18..32: all seen before


def test_training_keeps_snapshots_and_stops_after_the_threshold():
    model = fresh_model(config(), seed=0)
    run = train_induction(model, max_steps=30, threshold=None, eval_every=10, progress=False)
    assert run.step == list(range(1, 31)) and run.eval_step == [10, 20, 30] and run.formed_at is None
    assert set(run.snapshots) == {10, 20, 30} and not model.training
    assert torch.equal(run.snapshots[30]["unembed.W_U"], model.state_dict()["unembed.W_U"])
    assert not torch.equal(run.snapshots[10]["unembed.W_U"], run.snapshots[30]["unembed.W_U"])
    easy = train_induction(fresh_model(config(), seed=0), max_steps=50, threshold=-1.0, extra_steps=5,
                           eval_every=10, progress=False)
    assert easy.formed_at == 10 and easy.step[-1] == 15  # passed at the first evaluation, then 5 more steps
    with pytest.raises(ValueError, match="max_steps"):
        train_induction(model, max_steps=0)
    with pytest.raises(ValueError, match='"anywhere"'):
        train_induction(model, max_steps=5, data="random")


def test_every_position_keeps_training_until_the_model_copies_everywhere():
    """With every_position, passing the score is not enough: training goes on until copy_by_position says the model
    copies from every k >= 1 (here never: an untrained model guesses), and only then settles extra_steps more."""
    never = train_induction(fresh_model(config(), seed=0), max_steps=40, threshold=-1.0, every_position=0.5,
                            extra_steps=5, eval_every=10, progress=False)
    assert never.formed_at == 10 and never.everywhere_at is None and never.step[-1] == 40
    always = train_induction(fresh_model(config(), seed=0), max_steps=40, threshold=-1.0, every_position=-1.0,
                             extra_steps=5, eval_every=10, progress=False)
    assert always.formed_at == always.everywhere_at == 10 and always.step[-1] == 15
