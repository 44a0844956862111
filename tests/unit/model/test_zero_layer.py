"""The zero-layer Transformer: shapes, the embedding as a column lookup, bad input, training."""

import pytest
import torch

from helpers.model import Config
from helpers.model.hooks import Cache
from helpers.softmax import softmax
from helpers.train import evaluate, fresh_model, train

CFG = Config(n_vocab=11, d_model=6, n_ctx=5)


def test_shapes_follow_the_post():
    m = fresh_model(CFG)
    assert m.embed.W_E.shape == (6, 11)  # d_model x n_vocab
    assert m.pos_embed.W_pos.shape == (6, 5)  # d_model x n_ctx
    assert m.unembed.W_U.shape == (11, 6)  # n_vocab x d_model
    tokens = torch.tensor([[1, 2, 3], [4, 5, 6]])
    logits, cache = m.run_with_cache(tokens)
    assert logits.shape == (2, 11, 3)  # (batch, n_vocab, n)
    assert cache["x0"].shape == (2, 6, 3)  # (batch, d_model, n)
    assert torch.allclose(cache["p"].sum(1), torch.ones(2, 3))
    single = m(torch.tensor([1, 2, 3]))
    assert single.shape == (11, 3) and torch.allclose(single, logits[0])


def test_p_is_computed_only_when_something_reads_it():
    """p is as large as the logits: the model computes softmax(logits) only when something is attached to "p" (the
    full cache, or activations that ask for it); a plain forward pass and a cache of other names skip it."""
    m = fresh_model(CFG)
    tokens = torch.tensor([[1, 2, 3], [4, 5, 6]])
    logits, cache = m.run_with_cache(tokens)
    assert type(cache) is Cache and list(cache)[-2:] == ["logits", "p"]
    assert torch.equal(cache["p"], softmax(logits, dim=-2))
    computed = []
    m.hook_p.fns.append(computed.append)
    try:
        m(tokens)
    finally:
        m.hook_p.fns.clear()
    assert len(computed) == 1
    import helpers.model.transformer as transformer
    calls = []
    real = transformer.softmax
    transformer.softmax = lambda *a, **k: calls.append(1) or real(*a, **k)
    try:
        m(tokens)
        assert "p" not in m.activations(tokens, ["logits"]) and not calls
        assert torch.equal(m.activations(tokens, ["p"])["p"], cache["p"]) and calls
    finally:
        transformer.softmax = real
    _, single = m.run_with_cache(torch.tensor([1, 2, 3]))
    assert single["p"].shape == (11, 3) and torch.allclose(single["p"].sum(0), torch.ones(3))
    with pytest.raises(KeyError):
        single["q"]
    assert single.get("q") is None and "q" not in single


def test_unembedding_a_batch_makes_no_second_copy_of_the_logits():
    """W_U @ x on a batch would compute (batch, n, n_vocab) and copy it to (batch, n_vocab, n); the unembedding
    returns the first as a view: the same numbers, bit for bit, without the copy (memory)."""
    m = fresh_model(Config(n_vocab=50, d_model=8, n_ctx=7))
    for x in (torch.randn(5, 8, 7), torch.randn(5, 7, 8).mT):  # either memory layout of the residual stream
        logits = m.unembed(x)
        assert logits.shape == (5, 50, 7) and logits.mT.is_contiguous()
        assert torch.equal(logits, m.unembed.W_U @ x)
    x = torch.randn(8, 7)
    assert torch.equal(m.unembed(x), m.unembed.W_U @ x)  # one text: (n_vocab, n) as before


def test_embedding_is_W_E_times_one_hot_plus_W_pos():
    m = fresh_model(CFG)
    tokens = torch.tensor([3, 0, 7])
    t = torch.nn.functional.one_hot(tokens, 11).T.float()  # (n_vocab, n)
    _, cache = m.run_with_cache(tokens)
    assert torch.allclose(cache["x0"], m.embed.W_E @ t + m.pos_embed.W_pos[:, :3], atol=1e-6)
    # T(t) = softmax(W_U (W_E t_n + W_pos)) for the last token
    p_last = softmax(m.unembed.W_U @ (m.embed.W_E[:, 7] + m.pos_embed.W_pos[:, 2]))
    assert torch.allclose(m.next_token_probs(tokens), p_last, atol=1e-6)


def test_without_positions_order_does_not_matter():
    m = fresh_model(Config(n_vocab=11, d_model=6, n_ctx=5, positional=False))
    a, b = m(torch.tensor([1, 2, 3])), m(torch.tensor([3, 1, 2]))
    assert torch.allclose(a[:, [2, 0, 1]], b)


@pytest.mark.parametrize("tokens, message", [
    (torch.zeros(6, dtype=torch.long), "n = 6 tokens but this model's n_ctx is 5"),
    (torch.tensor([], dtype=torch.long), "context is empty"),
    (torch.tensor([1, 11]), "token id 11 is outside the vocabulary"),
    (torch.tensor([1.0, 2.0]), "integer token ids"),
    (torch.zeros(2, 2, 2, dtype=torch.long), "shape"),
])
def test_bad_input_is_explained(tokens, message):
    m = fresh_model(CFG)
    with pytest.raises((ValueError, TypeError), match=message):
        m(tokens)


def test_config_checks():
    with pytest.raises(ValueError, match="d_model"):
        Config(n_vocab=3, d_model=0)
    assert Config(n_vocab=3, d_model=64, n_heads=4).d_head == 16
    with pytest.raises(ValueError, match="pos_init_std"):
        Config(n_vocab=3, pos_init_std=-1.0)


def test_pos_init_std_scales_only_W_pos_and_defaults_to_init_std():
    base = fresh_model(Config(n_vocab=11, d_model=6, n_ctx=5), seed=3)
    same = fresh_model(Config(n_vocab=11, d_model=6, n_ctx=5, pos_init_std=0.02), seed=3)
    wide = fresh_model(Config(n_vocab=11, d_model=6, n_ctx=5, pos_init_std=0.5), seed=3)
    assert torch.equal(base.pos_embed.W_pos, same.pos_embed.W_pos)  # None means init_std (old checkpoints)
    torch.testing.assert_close(wide.pos_embed.W_pos, base.pos_embed.W_pos * 25)
    torch.testing.assert_close(wide.embed.W_E, base.embed.W_E)


def test_training_is_seeded_and_learns_a_bigram_chain():
    # a deterministic chain 1 -> 2 -> 3 -> ... -> 10 -> 1: a zero-layer model can learn it exactly
    ids = torch.arange(1, 11).repeat(50)
    runs = []
    for _ in range(2):
        m = fresh_model(CFG, seed=1)
        before = evaluate(m, ids[:40])
        h = train(m, ids, steps=150, batch_size=8, lr=0.05, heldout_ids=ids[:40], eval_every=50, progress=False)
        runs.append((m, h))
    (m1, h1), (m2, h2) = runs
    assert torch.equal(m1.embed.W_E, m2.embed.W_E)  # same seed, same weights
    assert h1.heldout_loss == h2.heldout_loss
    assert before > 2.0 and h1.final_heldout < 0.1  # from ~log(11) to almost certain
    assert evaluate(m1, ids[:40]) == pytest.approx(h1.final_heldout)
    assert torch.equal(m1.generate(torch.tensor([1]), 5, temperature=0.01), torch.tensor([1, 2, 3, 4, 5, 6]))
