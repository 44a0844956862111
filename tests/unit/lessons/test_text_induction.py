"""Notebook 09's section 10 (helpers/lessons/text_induction.py): the batches with passages written twice, their loss,
the
probe of held-out passages, a learner's passage read twice, and the two shipped models (text alone, with repeats):
their recorded figures re-measured on the files, and the phase change in their curves."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F

from helpers.data import default_data
from helpers.interp.scores import head_scores
from helpers.model import checkpoint
from helpers.lessons.text_induction import (N_CTX, config, copy_gain, mixed_loss, probe, repeated_passages, text_batch,
                                    train_text, written_twice)
from helpers.train import fresh_model
from tools import train_models


def test_half_the_rows_repeat_a_passage_and_only_the_repeat_is_scored_there():
    ids = default_data().train_ids
    tokens, mask = text_batch(ids, 16, N_CTX + 1, torch.Generator().manual_seed(4), repeat_share=0.5)
    assert tokens.shape == mask.shape == (16, N_CTX + 1) and mask.dtype == torch.bool
    for row, marks in zip(tokens[:8].tolist(), mask[:8].tolist()):
        marked = [i for i, m in enumerate(marks) if m]
        assert marked == list(range(marked[0], marked[-1] + 1)), "the marked words are one run"
        P = len(marked) + 1                                   # the repeat's first word is not marked
        assert 8 <= P <= N_CTX // 2
        start = marked[0] - 1 - P                             # where the passage's first copy begins
        assert row[start:start + P] == row[start + P:start + 2 * P], "the marked run is a copy of what precedes it"
    assert bool(mask[8:].all())                               # plain rows: every word scored
    again = text_batch(ids, 16, N_CTX + 1, torch.Generator().manual_seed(4), repeat_share=0.5)
    assert torch.equal(tokens, again[0]) and torch.equal(mask, again[1])
    plain, plain_mask = text_batch(ids, 4, N_CTX + 1, torch.Generator().manual_seed(4))
    assert bool(plain_mask.all())
    ids_again = ids.tolist()
    first = plain[0].tolist()
    assert any(ids_again[s:s + N_CTX + 1] == first for s in range(len(ids_again) - N_CTX))  # a window of the text


def test_the_mixed_loss_is_the_mean_of_the_repeats_and_the_plain_rows():
    model = fresh_model(config(), seed=1)
    tokens, mask = text_batch(default_data().train_ids, 4, N_CTX + 1, torch.Generator().manual_seed(2), 0.5)
    per_word = F.cross_entropy(model(tokens[:, :-1]), tokens[:, 1:], reduction="none")
    want = (per_word[:2][mask[:2, 1:]].mean() + per_word[2:].mean()) / 2
    assert torch.allclose(mixed_loss(model, tokens, mask, 2), want)
    assert torch.allclose(mixed_loss(model, tokens, torch.ones_like(mask), 0), model.loss(tokens))
    assert torch.allclose(mixed_loss(model, tokens, mask, 4), per_word[mask[:, 1:]].mean())


def test_the_probe_is_held_out_passages_written_twice():
    passages = repeated_passages()
    assert passages.shape == (32, N_CTX)
    assert torch.equal(passages[:, :N_CTX // 2], passages[:, N_CTX // 2:])
    heldout = default_data().heldout_ids.tolist()
    first = passages[0, :N_CTX // 2].tolist()
    assert any(heldout[s:s + len(first)] == first for s in range(len(heldout) - len(first)))


def test_a_typed_passage_is_read_twice_or_refused_with_a_message():
    ids, words = written_twice("In the beginning God created the heaven and the earth.")
    assert words[:3] == ["in", "the", "beginning"] and len(ids) == 2 * len(words)
    assert torch.equal(ids[:len(words)], ids[len(words):])
    _, words = written_twice("the zyzzyva of god")
    assert "<unk>" in words
    with pytest.raises(ValueError, match="has no token"):
        written_twice("   ")
    with pytest.raises(ValueError, match="has one token"):
        written_twice("Jesus")
    with pytest.raises(ValueError, match="33 tokens .words and punctuation marks.*keep it to 32"):
        written_twice("and " * 33)


def test_training_records_the_curve_it_promises():
    model = fresh_model(config(), seed=0)
    run = train_text(model, 4, batch_size=4, repeat_share=0.5, every=2)
    rows = run.rows()
    assert [r["step"] for r in rows] == [2, 4] and run.seconds > 0
    assert set(rows[0]) == {"step", "heldout", "loss_first", "loss_repeat", "induction", "previous"}
    assert len(rows[0]["induction"]) == 2 and len(rows[0]["induction"][0]) == 2
    assert not model.training


@pytest.mark.parametrize("name", list(train_models.TEXT))
def test_shipped_text_models_still_give_their_recorded_figures(name):
    path = checkpoint.named_path(name)
    assert path.is_file(), f"{path} is missing: run `.venv/bin/python -m tools.train_models {name}`"
    model, meta = checkpoint.load_named(name)
    assert model.cfg == config()
    assert json.loads(meta["recipe"]) == train_models.TEXT[name]
    assert meta["vocab_hash"] == train_models.vocab_hash(default_data().tokenizer)
    recorded, now = json.loads(meta["figures"]), probe(model)
    for key in ("heldout", "loss_first", "loss_repeat"):
        assert abs(now[key] - recorded[key]) < 0.005, (key, now[key], recorded[key])
    for key in ("induction", "previous"):
        assert torch.allclose(torch.tensor(now[key]), torch.tensor(recorded[key]), atol=0.005), key
    curve = json.loads(meta["curve"])
    assert [r["step"] for r in curve] == list(range(250, int(meta["steps"]) + 1, 250))
    assert path.stat().st_size < 2_000_000


def test_with_repeats_an_induction_head_forms_suddenly_and_the_text_alone_grows_none():
    curves = {name: json.loads(checkpoint.load_named(name)[1]["curve"]) for name in train_models.TEXT}
    rows = curves["text_induction"]
    drops = [a["loss_repeat"] - b["loss_repeat"] for a, b in zip(rows, rows[1:])]
    assert max(drops) > 0.4                                        # a phase change, not a slow slope
    assert rows[-1]["loss_repeat"] < rows[-1]["loss_first"] - 1.5
    assert max(rows[-1]["induction"][1]) > 0.5 and max(rows[-1]["previous"][0]) > 0.6
    plain = curves["text_plain"][-1]
    assert plain["loss_repeat"] > plain["loss_first"] - 0.5 and max(plain["induction"][1]) < 0.2
    model = checkpoint.load_named("text_induction")[0]
    scores = head_scores(model, repeated_passages(), which=("induction",))["induction"]
    assert float(scores[1].max()) > 0.5


def test_the_model_with_repeats_predicts_a_typed_verse_more_surely_the_second_time():
    model = checkpoint.load_named("text_induction")[0]
    words, first, again = copy_gain(model, "The LORD is my shepherd; I shall not want.")
    assert words == ["lord", "is", "my", "shepherd", ";", "i", "shall", "not", "want", "."]
    assert first.shape == again.shape == (len(words),)
    assert float(again.mean()) > float(first.mean()) + 0.3


def test_the_training_time_the_module_quotes_is_the_one_the_checkpoints_record():
    """help(helpers.lessons.text_induction) gives the shipped models' training time as their metadata records it."""
    import helpers.lessons.text_induction

    doc = " ".join(helpers.lessons.text_induction.__doc__.split())
    first, second = (int(checkpoint.metadata(checkpoint.named_path(name))["train_seconds"])
                     for name in ("text_induction", "text_plain"))
    minutes = "zero one two three four five six seven eight nine ten".split()[round((first + second) / 2 / 60)]
    assert round(first / 60) == round(second / 60), (first, second)
    assert f"about {minutes} minutes each" in doc, (first, second)
