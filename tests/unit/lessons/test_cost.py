"""helpers.lessons.cost: the multiplication counts of "Transformers for software engineers", both implementations,
and the timing helpers (notebook 10); the two ways of combining heads, and their timing (notebook 05)."""

import pytest
import torch

from helpers.lessons import cost


@pytest.mark.parametrize("d_model, d_head, n_ctx", [(1, 1, 1), (64, 32, 32), (768, 64, 1024), (12288, 128, 2048)])
def test_counts_follow_the_formulas(d_model, d_head, n_ctx):
    terms = cost.usual_terms(d_model, d_head, n_ctx)
    assert terms == {"projections": 4 * d_model * d_head * n_ctx, "pairs": 2 * d_head * n_ctx**2}
    assert cost.usual_mults(d_model, d_head, n_ctx) == cost.formula(d_model, d_head, n_ctx) \
        == 2 * d_head * n_ctx * (2 * d_model + n_ctx)
    # the text's n_ctx^2 (4 d_head d_model), plus the dot product and the weighting done for every pair
    assert cost.in_loop_mults(d_model, d_head, n_ctx) == n_ctx**2 * 4 * d_head * d_model + terms["pairs"]
    assert cost.quadratic_share(d_model, d_head, n_ctx) == pytest.approx(n_ctx / (2 * d_model + n_ctx))


def test_counts_are_exact_integers_for_huge_models():
    m = cost.MODELS["long context (128k)"]
    total = cost.model_attention_mults(**m)
    assert isinstance(total, int)
    assert total == m["n_layers"] * m["n_heads"] * 2 * m["d_head"] * m["n_ctx"] * (2 * m["d_model"] + m["n_ctx"])


def test_quadratic_share_small_for_gpt3_dominant_for_long_context():
    share = {name: cost.quadratic_share(m["d_model"], m["d_head"], m["n_ctx"]) for name, m in cost.MODELS.items()}
    assert share["GPT-3"] == pytest.approx(2048 / (2 * 12288 + 2048))
    assert share["GPT-2 Small"] == pytest.approx(0.4)
    assert share["GPT-3"] < 0.1 < 0.9 < share["long context (128k)"]


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "64"])
def test_bad_sizes_are_named(bad):
    with pytest.raises(ValueError, match="d_model must be a positive whole number"):
        cost.usual_mults(bad, 4, 4)
    with pytest.raises(ValueError, match="n_ctx must be a positive whole number"):
        cost.in_loop_mults(4, 4, bad)
    with pytest.raises(ValueError, match="d_head"):
        cost.formula(4, bad, 4)


@pytest.mark.parametrize("d_model, d_head, n", [(8, 2, 1), (16, 4, 7), (64, 32, 20)])
def test_both_implementations_compute_the_same_head(d_model, d_head, n):
    head = cost.random_head(d_model, d_head, seed=3)
    x = torch.randn(d_model, n, generator=torch.Generator().manual_seed(1))
    o = cost.usual_head(head, x)
    assert o.shape == (d_model, n)
    assert torch.allclose(o, cost.in_loop_head(head, x), atol=1e-5)
    # and the usual version is the textbook formula with q, k, v
    q, k, v = head.W_Q @ x, head.W_K @ x, head.W_V @ x
    A = torch.softmax(q.T @ k / d_head**0.5, dim=-1)
    assert torch.allclose(o, head.W_O @ v @ A.T, atol=1e-5)


def test_random_head_shapes_follow_the_post():
    h = cost.random_head(12, 3)
    assert h.W_Q.shape == h.W_K.shape == h.W_V.shape == (3, 12) and h.W_O.shape == (12, 3)


def test_time_versions_reports_counts_and_positive_times():
    rows = cost.time_versions([(16, 8), (32, 8)], d_head=4, repeat=1)
    assert [(r["d_model"], r["n_ctx"]) for r in rows] == [(16, 8), (32, 8)]
    for r in rows:
        assert r["usual_mults"] == cost.usual_mults(r["d_model"], 4, r["n_ctx"])
        assert r["in_loop_mults"] == cost.in_loop_mults(r["d_model"], 4, r["n_ctx"])
        assert r["usual_s"] > 0 and r["in_loop_s"] > 0


def test_seconds_takes_the_fastest_call():
    calls = []
    assert cost.seconds(lambda: calls.append(1), repeat=4) >= 0
    assert len(calls) == 4


@pytest.mark.parametrize("n_heads, d_model, d_head, n", [(1, 4, 4, 1), (4, 64, 16, 32), (3, 12, 5, 7)])
def test_both_ways_of_combining_heads_give_the_same_output(n_heads, d_model, d_head, n):
    from helpers.model.attention import concat_output

    W_O, r = cost.random_results(n_heads, d_model, d_head, n, seed=2)
    assert W_O.shape == (n_heads, d_model, d_head) and r.shape == (n_heads, d_head, n)
    W_O_cat, R = cost.stacked(W_O, r)
    assert W_O_cat.shape == (d_model, n_heads * d_head) and R.shape == (n_heads * d_head, n)
    assert R.data_ptr() == r.data_ptr()                       # R is r seen as one tall matrix: no copy
    for h in range(n_heads):
        assert torch.equal(W_O_cat[:, h * d_head:(h + 1) * d_head], W_O[h])   # block h is W_O^h
    added = cost.heads_added(W_O, r)
    torch.testing.assert_close(W_O_cat @ R, added, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(concat_output(r, W_O), added, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(added, sum(W_O[h] @ r[h] for h in range(n_heads)), atol=1e-6, rtol=1e-6)


def test_timing_the_two_forms_reports_every_round():
    W_O, r = cost.random_results(2, 8, 4, 5)
    t = cost.time_combining(W_O, r, repeat=3, budget=1e-4)
    assert len(t["runs"]) == 3 and all(a > 0 and s > 0 for a, s in t["runs"])
    for form in ("added", "stacked"):
        values = [run[0 if form == "added" else 1] for run in t["runs"]]
        assert t["fastest"][form] == min(values) and min(values) <= t["median"][form] <= max(values)


def test_combining_bad_input_is_named():
    W_O, r = cost.random_results(2, 8, 4, 5)
    with pytest.raises(ValueError, match=r"r has shape \(3, 4, 5\), expected \(2, 4, n\)"):
        cost.stacked(W_O, torch.zeros(3, 4, 5))
    with pytest.raises(ValueError, match="repeat must be a positive whole number"):
        cost.time_combining(W_O, r, repeat=0)
    with pytest.raises(ValueError, match="n_heads must be a positive whole number"):
        cost.random_results(0, 8, 4, 5)
