"""Claims from live training hold for every seed, not just the one a notebook runs (issue 8).

A notebook trains with seed 0 on the learner's CPU. Another CPU rounds the last bit differently and
training amplifies it, so what a learner's machine computes is, in effect, another sample from the same
training recipe. These tests train once per seed (0-4) with exactly the notebooks' recipes and check
the claims the notebooks assert, with the same margins. The ranges quoted in the notebooks' prose
were measured over more seeds (0-9) and with another CPU instruction set.

Claims about the shipped checkpoints are not retrained here: they are evaluated from the files
(tests/test_checkpoints.py), which gives the same numbers on every machine to the digits printed.
"""

from __future__ import annotations

import pytest
import torch

from helpers import ngrams
from helpers.data import default_data
from helpers.facts import FactsTask, compare_fact_models
from helpers.model.config import Config
from helpers.softmax import softmax
from helpers.train import evaluate, fit_to_counts, fresh_model, train
from helpers.interp.neurons import firing_counts, hidden

SEEDS = range(5)


@pytest.fixture(scope="module")
def corpus():
    data = default_data()
    V = data.n_vocab
    C = ngrams.bigram_counts(data.train_ids, V)
    return {"data": data, "C": C, "P": ngrams.normalize_columns(C), "freq": C.sum(0) / C.sum(),
            "ce_unigram": ngrams.cross_entropy(ngrams.unigram_probs(data.train_ids, V), data.heldout_ids),
            "ce_bigram": ngrams.cross_entropy(ngrams.bigram_probs(data.train_ids, V), data.heldout_ids),
            "unigram": ngrams.unigram_probs(data.train_ids, V)}


@pytest.mark.parametrize("seed", SEEDS)
def test_02_zero_layer_model_closes_most_of_the_gap_to_the_bigram_table(corpus, seed):
    """Notebook 02, section 4: 300 steps of the zero-layer model (initial weights and batches from ``seed``)."""
    data, V = corpus["data"], corpus["data"].n_vocab
    zero = fresh_model(Config(n_vocab=V, d_model=64, n_ctx=32, positional=False), seed=seed)
    train(zero, data.train_ids, steps=300, batch_size=32, lr=1e-2, seed=seed, progress=False)
    ce_zero = evaluate(zero, data.heldout_ids)
    gap_closed = (corpus["ce_unigram"] - ce_zero) / (corpus["ce_unigram"] - corpus["ce_bigram"])
    assert ce_zero < corpus["ce_unigram"]
    assert gap_closed > 0.8, f"seed {seed}: closed only {gap_closed:.1%} of the unigram -> bigram gap"
    with torch.no_grad():
        Q = softmax(zero.unembed.W_U @ zero.embed.W_E, dim=0)
    kl_model = ngrams.kl_divergence(corpus["P"], Q, corpus["freq"])
    kl_unigram = ngrams.kl_divergence(corpus["P"], corpus["unigram"][:, None].expand(-1, V), corpus["freq"])
    assert 0 < kl_model < kl_unigram / 3, f"seed {seed}: KL {kl_model:.3f} vs unigram {kl_unigram:.3f}"


@pytest.mark.parametrize("seed", SEEDS)
def test_02_every_doubling_of_d_model_brings_the_table_closer(corpus, seed):
    """Notebook 02, section 5: the d_model sweep on the 200 most frequent tokens (fit_to_counts)."""
    top = torch.arange(1, 201)
    C_top = corpus["C"][top][:, top]
    P_top, freq_top = ngrams.normalize_columns(C_top), C_top.sum(0) / C_top.sum()
    kls = []
    for d in [1, 2, 4, 8, 16, 32, 64]:
        small = fresh_model(Config(n_vocab=200, d_model=d, n_ctx=1, positional=False), seed=seed)
        fit_to_counts(small, C_top, steps=300, progress=False)
        with torch.no_grad():
            W = small.unembed.W_U @ small.embed.W_E
            assert torch.linalg.matrix_rank(W) <= d
            kls.append(ngrams.kl_divergence(P_top, softmax(W, dim=0), freq_top))
    assert all(a > b for a, b in zip(kls, kls[1:])), f"seed {seed}: {kls}"
    assert kls[0] > 20 * kls[-1], f"seed {seed}: {kls}"


@pytest.mark.parametrize("seed", SEEDS)
def test_02_the_causal_mask_alone_gives_order_and_rough_position(corpus, seed):
    """02's attention layer without W_pos (random weights, the notebook's shapes): unmasked it is
    permutation-equivariant, masked it is not, and log|o_i| tracks log i only under the mask."""
    from helpers.model import names

    data = corpus["data"]
    windows = data.heldout_ids[: 200 * 32].reshape(200, 32)
    log_i = torch.log(torch.arange(1, 33.0)).repeat(200)
    ids = data.heldout_ids[:8]
    perm = torch.tensor([3, 0, 6, 1, 7, 2, 5, 4])
    for masked in (False, True):
        layer = fresh_model(Config(n_vocab=data.n_vocab, d_model=64, n_ctx=32, n_layers=1, n_heads=4,
                                   positional=False, masked=masked), seed=seed)
        with torch.no_grad():
            assert torch.allclose(layer(ids[perm]), layer(ids)[:, perm], atol=1e-6) == (not masked)
            o = layer.run_with_cache(windows)[1][names.key(0, "o")]
        corr = float(torch.corrcoef(torch.stack([o.norm(dim=1).log().reshape(-1), log_i]))[0, 1])
        assert (corr < -0.6) if masked else abs(corr) < 0.05, (masked, corr)


@pytest.fixture(scope="module")
def facts_task():
    return FactsTask.make(n_people=32, n_things=8, n_colours=16, seed=0)  # notebook 06's table


@pytest.mark.parametrize("seed", SEEDS)
def test_06_the_mlp_learns_two_token_facts_far_faster_per_parameter(facts_task, seed):
    """Notebook 06: the three models of FACT_MODELS, 300 steps, every assert of the notebook's cell."""
    task = facts_task
    results = compare_fact_models(task, seed=seed, steps=300)
    with_mlp, without, wide = results["attention + MLP"], results["attention only"], results["attention only, wide"]
    summary = {k: round(v["accuracy"], 3) for k, v in results.items()}
    assert with_mlp["accuracy"] >= 0.95, f"seed {seed}: {summary}"
    assert without["accuracy"] <= 0.85 and wide["accuracy"] <= 0.85, f"seed {seed}: {summary}"
    assert abs(wide["params"] / with_mlp["params"] - 1) < 0.03
    assert without["params"] < 0.5 * with_mlp["params"]
    assert without["loss"] < task.best_constant_loss() and wide["loss"] < task.best_constant_loss()
    assert without["curve"][-1] < without["curve"][len(without["curve"]) // 2]
    # the neurons are shared between facts (the notebook's next cell)
    fires_on = firing_counts(with_mlp["model"], task)
    fraction = float(fires_on.sum()) / (task.n_facts * len(fires_on))
    assert 0.3 < fraction < 0.65, f"seed {seed}: z > 0 for {fraction:.2f} of the pairs"
    assert int(fires_on.median()) > task.n_facts // 4, f"seed {seed}: median {int(fires_on.median())}"
    # the widget's opening prompt: its strongest neuron fires on many other prompts too
    strongest = int(hidden(with_mlp["model"], task.prompt(task.people[0], task.things[0])).argmax())
    assert int(fires_on[strongest]) > task.n_facts // 8, \
        f"seed {seed}: the strongest neuron fires on only {int(fires_on[strongest])} prompts"
    # the ablation cell: each fact's strongest neuron off leaves 35-85 % of the known facts right, and the most
    # needed neuron breaks at least 20 facts (measured 53-66 % and 42-95)
    from helpers.interp.ablation import ablated

    model = with_mlp["model"]
    prompts, answers = task.prompts()
    right = model.next_token_probs(prompts).argmax(-1) == answers
    top = hidden(model, prompts).argmax(-1)
    survive, broken = 0, []
    for j in top.unique().tolist():
        with ablated(model, neurons=[(0, j)]):
            still = model.next_token_probs(prompts).argmax(-1) == answers
        survive += int((still & right & (top == j)).sum())
        broken.append(int((right & ~still).sum()))
    assert 0.35 < survive / int(right.sum()) < 0.85 and max(broken) >= 20, (seed, survive, max(broken))


@pytest.mark.parametrize("seed", SEEDS)
def test_09_induction_heads_form_and_are_shown_by_intervention(seed):
    """Notebook 09: the recipe (2 layers, attention only, repeating sequences) and every assert it makes."""
    import math

    from helpers.induction import config, probe_tokens, repeat_loss, train_induction
    from helpers.interp.ablation import ablated
    from helpers.interp.circuits import composition_scores
    from helpers.interp.loss import per_position_loss
    from helpers.interp.scores import head_scores

    model = fresh_model(config(n_layers=2), seed=seed)
    run = train_induction(model, max_steps=1500, threshold=0.85, extra_steps=100, seed=seed, progress=False)
    early, late = sum(run.loss[:100]) / 100, sum(run.loss[-20:]) / 20
    assert run.formed_at is not None and run.formed_at <= 1000, f"seed {seed}: formed at {run.formed_at}"
    assert early > 3.8 and late < early - 1.5, (seed, early, late)
    probe = probe_tokens(32)
    first, repeat = repeat_loss(model, probe)
    assert first > 3.5 and repeat < 0.5, (seed, first, repeat)
    scores = head_scores(model, probe, which=("previous", "induction"))
    previous_heads = [h for h in range(2) if scores["previous"][0, h] > 0.3]
    induction_heads = [h for h in range(2) if scores["induction"][1, h] > 0.5]
    other_heads = [h for h in range(2) if h not in previous_heads]
    assert previous_heads and induction_heads, (seed, scores)

    def without(heads):
        with ablated(model, heads=heads):
            return repeat_loss(model, probe)[1]

    values = [without([]), without([(0, h) for h in previous_heads]), without([(0, h) for h in other_heads]),
              without([(1, 0)]), without([(1, 0), (1, 1)])]
    assert values[1] > 2.5, (seed, values)
    assert not other_heads or values[2] < 0.8, (seed, values)
    assert values[0] + 0.5 < values[3] < values[4], (seed, values)
    assert values[4] > 2.5, (seed, values)
    K, Q, V = (composition_scores(model, kind) for kind in "KQV")
    prev = int(scores["previous"][0].argmax())
    for h2 in induction_heads:
        assert float(K[prev, h2]) > max(float(Q[prev, h2]), float(V[prev, h2])), (seed, K, Q, V)
    strongest_K = min(float(K[h1, h2]) for h1 in previous_heads for h2 in induction_heads)
    assert not other_heads or strongest_K > max(float(K[h, h2]) for h in other_heads for h2 in induction_heads)
    # section 6: the previous-token head is needed on the keys' path only
    from helpers.interp.paths import path_ablated

    def without_path(to):
        with path_ablated(model, [(0, h) for h in previous_heads], to):
            return repeat_loss(model, probe)[1]

    assert without_path((1, "k")) > 2.5, seed
    assert max(without_path(to) for to in ((1, "q"), (1, "v"), "logits")) < values[0] + 0.2, seed
    for period in (20, 3):
        g = torch.Generator().manual_seed(5)
        seg = torch.stack([torch.randperm(64, generator=g)[:period] for _ in range(16)])
        L = per_position_loss(model, seg.repeat(1, math.ceil(32 / period))[:, :32]).mean(0)
        assert float(L[period:].mean()) < 0.8, (seed, period, float(L[period:].mean()))
    # (the explorer's opening guess, "u" in 159 of 160 runs measured, and exercise 9.3, graded on shipped copies of the
    # model, are no longer claims about a live run)
    # one layer, the same steps, fails
    one = fresh_model(config(n_layers=1), seed=seed)
    train_induction(one, max_steps=run.step[-1], threshold=None, seed=seed, progress=False)
    repeat_1 = repeat_loss(one, probe)[1]
    assert repeat_1 > 2.0 and repeat_1 > 4 * repeat, (seed, repeat_1, repeat)
