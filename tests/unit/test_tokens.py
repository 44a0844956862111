"""Word-level tokenizer, prompts and batching."""

import pytest
import torch

from helpers.tokens import (UNK, EmptyTextError, Tokenizer, UnknownWordError, covering_windows,
                            prepare_prompt, random_windows, split_words)

TEXT = "The cat sat on the mat.\nThe dog sat on the log, and the cat ran!"


@pytest.fixture
def tok():
    return Tokenizer.train(TEXT, max_vocab=100)


def test_split_words_lowercases_and_separates_punctuation():
    assert split_words("Let there be light: and there was light.\n") == \
        ["let", "there", "be", "light", ":", "and", "there", "was", "light", ".", "\n"]
    assert split_words("don't stop") == ["don't", "stop"]


def test_long_text_is_split_in_pieces_with_the_same_tokens(monkeypatch):
    """A corpus is split into words a piece at a time (memory); the pieces join to exactly the whole split."""
    import helpers.tokens as tokens

    text = "ÀB Σ.\nΣΑΣ don't\n\n12ab, cat's!\n" * 7 + "the end"
    whole = split_words(text)
    for size in (1, 3, 10, 40):
        assert [w for chunk in tokens._word_chunks(text, size) for w in chunk] == whole
    monkeypatch.setattr(tokens, "_CHUNK", 5)
    small = Tokenizer.train(text, max_vocab=8)
    monkeypatch.setattr(tokens, "_CHUNK", 1 << 20)
    assert small.vocab == Tokenizer.train(text, max_vocab=8).vocab
    big = small.encode(text)
    monkeypatch.setattr(tokens, "_CHUNK", 5)
    ids = small.encode(text)
    assert ids.dtype == torch.long and ids.tolist() == big.tolist() == [small.index.get(w, 0) for w in whole]
    with pytest.raises(UnknownWordError, match="'zebra'"):
        small.encode("σ, 12.\n" * 5 + "zebra σ", unknown="error")


def test_vocab_is_by_frequency_with_unk_first(tok):
    assert tok.vocab[0] == UNK
    assert tok.vocab[1] == "the"  # 4 times, the most frequent
    assert len(set(tok.vocab)) == tok.n_vocab


def test_cap_keeps_most_frequent():
    tok = Tokenizer.train(TEXT, max_vocab=3)
    assert tok.vocab == [UNK, "the", "cat"]  # "cat", "on" and "sat" tie at 2: alphabetical


def test_round_trip_on_in_vocabulary_text(tok):
    ids = tok.encode(TEXT)
    assert tok.decode(ids) == TEXT.lower()
    assert torch.equal(tok.encode(tok.decode(ids)), ids)


def test_unknown_words(tok):
    ids = tok.encode("the zebra sat")
    assert ids.tolist() == [tok.index["the"], 0, tok.index["sat"]]
    assert tok.unknown_words("the zebra sat") == ["zebra"]
    with pytest.raises(UnknownWordError, match="'zebra' is not one of the .* tokens"):
        tok.encode("the zebra sat", unknown="error")


def test_empty_text(tok):
    assert tok.encode("").shape == (0,)
    with pytest.raises(EmptyTextError, match="empty"):
        prepare_prompt("   ", tok)
    with pytest.raises(EmptyTextError):
        Tokenizer.train("")


def test_one_hot_is_the_posts_t_matrix(tok):
    ids = tok.encode("the cat")
    t = tok.one_hot(ids)
    assert t.shape == (tok.n_vocab, 2)
    assert t.sum(0).tolist() == [1.0, 1.0] and t[ids[1], 1] == 1


def test_bad_ids(tok):
    with pytest.raises(IndexError, match="outside the vocabulary"):
        tok.decode([tok.n_vocab])


def test_prompt_longer_than_context_is_cut_with_notice(tok):
    p = prepare_prompt("the cat sat on the mat", tok, n_ctx=4)
    assert p.tokens == ["sat", "on", "the", "mat"] and p.dropped == 2
    assert "first 2 were cut" in p.notice()
    q = prepare_prompt("the zebra", tok)
    assert q.tokens == ["the", UNK] and "'zebra'" in q.notice()
    assert prepare_prompt("the cat", tok).notice() == ""


def test_save_load(tok, tmp_path):
    tok.save(tmp_path / "v.json")
    assert Tokenizer.load(tmp_path / "v.json").vocab == tok.vocab


def test_windows():
    ids = torch.arange(10)
    g = torch.Generator().manual_seed(0)
    b = random_windows(ids, 4, 3, g)
    assert b.shape == (3, 5)
    assert torch.all(b[:, 1:] - b[:, :-1] == 1)  # consecutive tokens
    w = covering_windows(ids, 4)
    predicted = torch.cat([x[1:] for x in w])
    assert predicted.tolist() == list(range(1, 10))  # every token after the first, exactly once
    with pytest.raises(ValueError, match="fewer than n_ctx"):
        random_windows(ids, 10, 1, g)
