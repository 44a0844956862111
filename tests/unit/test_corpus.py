"""Corpus loading and the fixed held-out split."""

import pytest

from helpers import corpus


def test_default_corpus_is_the_king_james_text():
    text = corpus.load_text()
    lines = text.split("\n")
    assert len(lines) == 31_103
    assert lines[0] == "In the beginning God created the heaven and the earth."


def test_any_text_file_works(tmp_path):
    p = tmp_path / "tiny.txt"
    p.write_text("one two three\n" * 40)
    c = corpus.load_corpus(p)
    assert c.name == "tiny.txt"
    assert c.train and c.heldout


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="No corpus file at .*nope.txt"):
        corpus.load_text(tmp_path / "nope.txt")


def test_empty_file_is_refused(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_text("  \n ")
    with pytest.raises(ValueError, match="empty"):
        corpus.load_text(p)


def test_split_is_fixed_seeded_and_disjoint():
    text = "\n".join(f"line {i}" for i in range(1000))
    a, b = corpus.split(text, seed=0), corpus.split(text, seed=0)
    assert a == b
    assert corpus.split(text, seed=1) != a
    train, held = set(a.train.split("\n")), set(a.heldout.split("\n"))
    assert not train & held
    assert train | held == set(text.split("\n"))
    assert 0.05 < len(held) / 1000 < 0.15  # ~10 % in blocks of 50 lines


def test_short_text_without_lines_splits_by_words():
    text = " ".join(f"w{i}" for i in range(1000))
    c = corpus.split(text)
    assert len(c.heldout.split()) == 100 and len(c.train.split()) == 900


def test_too_short_text_says_so():
    with pytest.raises(ValueError, match="too short"):
        corpus.split("just a few words")


def test_bad_fraction():
    with pytest.raises(ValueError, match="heldout_fraction"):
        corpus.split("a\n" * 100, heldout_fraction=1.5)


def test_notebook_01s_sentence_on_unk_holds():
    """01: "about a fifth of them are names ..., the rest ordinary words (pay, keeper, owner, skins)"."""
    from collections import Counter

    from helpers.data import default_data
    from helpers.tokens import TOKEN_PATTERN

    d = default_data()
    raw = d.corpus.heldout
    unk = [m.group(0) for m in TOKEN_PATTERN.finditer(raw.lower()) if m.group(0) not in d.tokenizer]
    written_lower = {m.group(0) for m in TOKEN_PATTERN.finditer(d.corpus.train + raw)}  # as written in the text
    names = [w for w in unk if w not in written_lower]             # never written in lower case: a name
    assert 0.15 < len(names) / len(unk) < 0.3
    assert {"amaziah", "cain", "ahasuerus"} <= set(names)
    common = [w for w, _ in Counter(w for w in unk if w in written_lower).most_common(10)]
    assert {"pay", "keeper", "owner", "skins"} <= set(common)
