"""n-gram counts and probabilities against hand-counted tiny texts."""

import math

import pytest
import torch

from helpers import ngrams
from helpers.tokens import Tokenizer

# vocabulary: <unk>=0, a=1, b=2, c=3 (by frequency: a 4x, b 3x, c 1x)
IDS = torch.tensor([1, 2, 1, 2, 1, 3, 1, 2])  # a b a b a c a b


def test_bigram_counts_by_hand():
    C = ngrams.bigram_counts(IDS, 4)
    # column = previous token, row = next token: after a comes b, b, c, b; after b comes a, a
    assert C[:, 1].tolist() == [0, 0, 3, 1]
    assert C[:, 2].tolist() == [0, 2, 0, 0]
    assert C[:, 3].tolist() == [0, 1, 0, 0]
    assert C.sum() == len(IDS) - 1


def test_columns_are_distributions():
    P = ngrams.normalize_columns(ngrams.bigram_counts(IDS, 4))
    assert torch.allclose(P[:, 1], torch.tensor([0, 0, 0.75, 0.25]))
    assert P[:, 0].sum() == 0  # <unk> never occurs: its column stays zero instead of NaN
    S = ngrams.bigram_probs(IDS, 4, lam=0.9)
    assert torch.allclose(S.sum(0), torch.ones(4))
    assert (S > 0).all()


def test_smoothed_bigram_table_by_hand():
    """P[:, a] = lam * counts after a (normalised) + (1 - lam) * unigram; a token never followed by anything
    (<unk> here) gets the unigram alone. Counts are float32 tables."""
    C = ngrams.bigram_counts(IDS, 4)
    assert C.dtype == torch.float32
    uni = ngrams.unigram_probs(IDS, 4)
    S = ngrams.bigram_probs(IDS, 4, lam=0.9)
    torch.testing.assert_close(S[:, 1], 0.9 * torch.tensor([0, 0, 0.75, 0.25]) + 0.1 * uni)
    torch.testing.assert_close(S[:, 3], 0.9 * torch.tensor([0, 1.0, 0, 0]) + 0.1 * uni)
    assert torch.equal(S[:, 0], uni)  # <unk>: no counts, the unigram entirely
    assert torch.equal(ngrams.bigram_probs(IDS, 4, lam=0.0), uni[:, None].expand(4, 4))


def test_unigram_with_smoothing():
    p = ngrams.unigram_probs(IDS, 4, alpha=0)
    assert p.tolist() == [0, 0.5, 0.375, 0.125]
    assert (ngrams.unigram_probs(IDS, 4) > 0).all()


def test_cross_entropies_by_hand():
    P = ngrams.normalize_columns(ngrams.bigram_counts(IDS, 4))
    # predictions in IDS: b|a .75, a|b 1, b|a .75, a|b 1, c|a .25, a|c 1, b|a .75
    expected = -(3 * math.log(0.75) + math.log(0.25)) / 7
    assert ngrams.cross_entropy(P, IDS) == pytest.approx(expected)
    assert ngrams.uniform_cross_entropy(4) == pytest.approx(math.log(4))
    assert ngrams.cross_entropy(P, torch.tensor([3, 2])) == math.inf  # b never follows c
    with pytest.raises(ValueError, match="two tokens"):
        ngrams.cross_entropy(P, torch.tensor([1]))


def test_next_token_counts_for_longer_contexts():
    assert ngrams.next_token_counts(IDS, [1, 2], 4).tolist() == [0, 2, 0, 0]  # "a b" -> a, a
    assert ngrams.next_token_counts(IDS, [], 4).tolist() == [0, 4, 3, 1]
    r = ngrams.next_token_probs(IDS, torch.tensor([3, 1]), n=3, n_vocab=4)
    assert r.order == 3 and r.probs[2] == 1  # "c a" -> b
    r = ngrams.next_token_probs(IDS, torch.tensor([2, 3]), n=3, n_vocab=4)  # "b c" unseen
    assert r.order == 2 and r.probs[1] == 1  # backs off to "c" -> a
    with pytest.raises(ValueError, match="n must be at least 1"):
        ngrams.next_token_probs(IDS, torch.tensor([1]), n=0, n_vocab=4)


def test_temperature():
    r1 = ngrams.next_token_probs(IDS, torch.tensor([1]), 2, 4, temperature=1.0)
    r0 = ngrams.next_token_probs(IDS, torch.tensor([1]), 2, 4, temperature=0.05)
    assert r0.probs[2] > 0.99 and r1.probs[2] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="temperature must be positive"):
        ngrams.next_token_probs(IDS, torch.tensor([1]), 2, 4, temperature=0)


def test_sampling_is_seeded_and_follows_the_table():
    s1 = ngrams.sample(IDS, torch.tensor([1]), 2, 4, steps=20, seed=3)
    assert torch.equal(s1, ngrams.sample(IDS, torch.tensor([1]), 2, 4, steps=20, seed=3))
    C = ngrams.bigram_counts(IDS, 4)
    for a, b in zip(s1[:-1].tolist(), s1[1:].tolist()):
        assert C[b, a] > 0  # every sampled pair occurs in the text


def test_top_k():
    vocab = ["<unk>", "a", "b", "c"]
    assert ngrams.top_k(torch.tensor([0, 0.5, 0.3, 0.2]), 2, vocab) == [("a", 0.5), ("b", pytest.approx(0.3))]
    assert len(ngrams.top_k(torch.tensor([0, 1.0, 0, 0]), 3, vocab)) == 1  # no zero-probability tokens


def test_ngram_table_stats_by_hand():
    train = torch.tensor([1, 2, 1, 2, 1, 3])  # a b a b a c
    held = torch.tensor([1, 2, 3])  # a b c
    rows = ngrams.ngram_table_stats(train, held, 3, 4)
    assert [r["distinct_in_train"] for r in rows] == [3, 3, 3]  # {a,b,c}; {ab,ba,ac}; {aba,bab,bac}
    assert rows[0]["heldout_unseen"] == 0
    assert rows[1]["heldout_unseen"] == pytest.approx(0.5)  # ab seen, bc unseen
    assert rows[2]["heldout_unseen"] == 1.0  # abc unseen
    assert [r["full_table"] for r in rows] == [4, 16, 64]


def test_works_with_a_real_tokenizer():
    tok = Tokenizer.train("the cat sat. the cat ran. the dog sat.")
    ids = tok.encode("the cat sat. the cat ran. the dog sat.")
    r = ngrams.next_token_probs(ids, tok.encode("the"), 2, tok.n_vocab)
    assert dict(ngrams.top_k(r.probs, 2, tok.vocab)) == {"cat": pytest.approx(2 / 3), "dog": pytest.approx(1 / 3)}


def test_next_token_counts_index_equals_a_scan_of_the_stream():
    """The position index (built once per stream) gives exactly the counts of scanning the whole stream,
    for contexts that occur, that never occur, with ids the stream lacks, and when called again (cached)."""
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 6, (400,), generator=g)

    def scan(context, n_vocab=8):
        k = len(context)
        out = torch.zeros(n_vocab)
        for i in range(len(ids) - k):
            if ids[i:i + k].tolist() == list(context):
                out[ids[i + k]] += 1
        return out

    contexts = [[], [0], [5], [7], [1, 2], [2, 2, 2], [3, 7], [0, 1, 2, 3]] + \
        [ids[i:i + 3].tolist() for i in range(0, 390, 37)] + [ids[-2:].tolist()]
    for _ in range(2):
        for context in contexts:
            assert torch.equal(ngrams.next_token_counts(ids, context, 8), scan(context)), context
