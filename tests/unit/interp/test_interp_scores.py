"""helpers.interp.scores, .sequences and .loss on hand-made patterns and token sequences."""

import math

import pytest
import torch
from support.interp_models import uniform_model

from helpers.interp import scores
from helpers.interp.loss import per_position_loss
from helpers.interp.sequences import repeated_tokens
from helpers.model.config import Config
from helpers.model.names import key
from helpers.train import fresh_model

T = torch.tensor([5, 6, 7, 5, 6, 7])  # period 3


def _pairs(mask):
    return sorted(map(tuple, mask.nonzero().tolist()))


def test_masks_say_which_query_attends_to_which_key():
    assert _pairs(scores.previous_token_mask(4)) == [(1, 0), (2, 1), (3, 2)]
    assert _pairs(scores.duplicate_token_mask(T)) == [(3, 0), (4, 1), (5, 2)]  # earlier copies of the same token
    assert _pairs(scores.induction_mask(T)) == [(3, 1), (4, 2), (5, 3)]  # the token after the earlier copy
    # a token repeated at once: query 1 ("a") has key 1 itself as the token after the earlier "a"
    assert _pairs(scores.induction_mask(torch.tensor([1, 1]))) == [(1, 1)]
    assert scores.induction_mask(torch.stack([T, T])).shape == (2, 6, 6)


def _uniform_causal(n):
    return torch.ones(n, n).tril() / torch.arange(1, n + 1)[:, None]


def test_scores_of_hand_made_heads():
    n = 6
    perfect_induction = torch.zeros(n, n)
    perfect_induction[:3] = _uniform_causal(n)[:3]  # the first half: no induction target, any pattern
    for i, j in [(3, 1), (4, 2), (5, 3)]:
        perfect_induction[i, j] = 1.0
    previous = torch.eye(n).roll(-1, dims=1).tril()  # key i - 1 ...
    previous[0, 0] = 1.0  # ... and the first token on itself
    A = torch.stack([perfect_induction, previous, _uniform_causal(n)])  # (n_heads, n, n)
    torch.testing.assert_close(scores.induction_score(A, T), torch.tensor([1.0, 0.0, (1 / 4 + 1 / 5 + 1 / 6) / 3]))
    torch.testing.assert_close(scores.previous_token_score(A)[1:],
                               torch.tensor([1.0, sum(1 / i for i in range(2, 7)) / 5]))
    torch.testing.assert_close(scores.duplicate_token_score(A, T)[1:], torch.tensor([0.0, (1 / 4 + 1 / 5 + 1 / 6) / 3]))
    # a batch: the mean runs over the qualifying queries of every text
    batch = scores.induction_score(torch.stack([A, A]), torch.stack([T, torch.tensor([1, 2, 3, 4, 5, 1])]))
    assert float(batch[0]) == pytest.approx((1 + 1 + 1 + 0) / 4)  # 2nd text: query 5 -> key 1, which has weight 0


def test_head_scores_of_a_model_agree_with_its_patterns():
    model = fresh_model(Config(n_vocab=20, d_model=16, n_ctx=12, n_layers=2, n_heads=3), seed=0)
    ids = repeated_tokens(20, 6, batch=4, seed=1)
    got = scores.head_scores(model, ids)
    assert set(got) == {"previous", "duplicate", "induction"} and got["induction"].shape == (2, 3)
    _, cache = model.run_with_cache(ids)
    torch.testing.assert_close(got["induction"][1], scores.induction_score(cache[key(1, "A")], ids))
    # an untrained model attends about uniformly: the induction score is close to the uniform value
    uniform = scores.induction_score(_uniform_causal(12)[None].expand(4, 1, 12, 12), ids)
    assert torch.allclose(got["induction"], uniform.expand(2, 3), atol=0.05)
    assert list(scores.head_scores(model, ids, which=("previous",))) == ["previous"]


def test_the_uniform_model_scores_as_computed_by_hand():
    got = scores.head_scores(uniform_model(), torch.tensor([0, 1, 0, 1]))
    assert float(got["previous"][0, 0]) == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert float(got["induction"][0, 0]) == pytest.approx((1 / 3 + 1 / 4) / 2)  # queries 2, 3 -> keys 1, 2


def test_scores_explain_bad_input():
    with pytest.raises(ValueError, match="no token occurs twice"):
        scores.induction_score(_uniform_causal(3)[None], torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="no token occurs twice"):
        scores.head_scores(uniform_model(), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="n >= 2"):
        scores.previous_token_score(torch.ones(1, 1, 1))
    with pytest.raises(ValueError, match="n_layers = 0"):
        scores.head_scores(fresh_model(Config(n_vocab=5, d_model=4, n_ctx=4)), torch.tensor([1, 1]))
    with pytest.raises(ValueError, match="unknown score"):
        scores.head_scores(uniform_model(), torch.tensor([0, 0]), which=("copying",))
    with pytest.raises(ValueError, match="n_ctx is 6"):
        scores.head_scores(uniform_model(), torch.zeros(7, dtype=torch.long))
    with pytest.raises(ValueError, match="for the same n"):
        scores.pattern_score(torch.ones(1, 3, 3), torch.ones(4, 4, dtype=torch.bool))


def test_repeated_tokens():
    ids = repeated_tokens(50, 8, batch=3, seed=4)
    assert ids.shape == (3, 16) and torch.equal(ids[:, :8], ids[:, 8:])
    assert all(len(set(row[:8].tolist())) == 8 for row in ids)  # distinct inside a half
    assert torch.equal(ids, repeated_tokens(50, 8, batch=3, seed=4))  # seeded
    assert not torch.equal(ids, repeated_tokens(50, 8, batch=3, seed=5))
    assert int(repeated_tokens(3, 10, distinct=False).max()) < 3
    with pytest.raises(ValueError, match="10 distinct tokens do not exist in a vocabulary of n_vocab = 5"):
        repeated_tokens(5, 10)
    with pytest.raises(ValueError, match="at least 1"):
        repeated_tokens(5, 0)


def test_per_position_loss_by_hand():
    model = uniform_model()
    with torch.no_grad():
        model.unembed.W_U.zero_()  # every logit 0: p = 1/3 for every token, loss ln 3 everywhere
    torch.testing.assert_close(per_position_loss(model, [0, 1, 2, 0]), torch.full((3,), math.log(3)))
    model = uniform_model()  # [0, 0]: x1 = (2, 0), logits (2, 0, 0): loss of token 0 = -ln(e^2 / (e^2 + 2))
    assert float(per_position_loss(model, [0, 0])[0]) == pytest.approx(-math.log(math.e ** 2 / (math.e ** 2 + 2)))


def test_per_position_loss_averages_to_the_models_loss():
    model = fresh_model(Config(n_vocab=20, d_model=16, n_ctx=8, n_layers=1, n_heads=2), seed=0)
    ids = torch.randint(20, (3, 9), generator=torch.Generator().manual_seed(0))
    losses = per_position_loss(model, ids)
    assert losses.shape == (3, 8)
    assert float(losses.mean()) == pytest.approx(model.loss(ids).item(), abs=1e-5)


def test_per_position_loss_explains_bad_input():
    model = uniform_model()
    with pytest.raises(ValueError, match="8 tokens give a context of n = 7 .* n_ctx is 6: give at most 7 tokens"):
        per_position_loss(model, [0] * 8)
    with pytest.raises(ValueError, match="n \\+ 1 >= 2 token ids"):
        per_position_loss(model, [0])
    with pytest.raises(ValueError, match="token id 3 is outside the vocabulary"):
        per_position_loss(model, [0, 1, 3])
    with pytest.raises(ValueError, match="token id 4 is outside the vocabulary"):
        per_position_loss(model, [4, 1, 2])
