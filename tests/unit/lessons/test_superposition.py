"""The toy model of superposition and the sparse autoencoder (helpers/lessons/superposition.py): what each is said to
do, on runs small enough for the fast tier. The outcomes tested are the qualitative ones the papers report (how
many features get a direction), with wide margins: on any CPU a feature is either kept (length near 1) or dropped
(near 0)."""

import pytest
import torch

from helpers.lessons import superposition as S
from helpers.model import names
from helpers.model.config import Config
from helpers.train import fresh_model


def kept(W: torch.Tensor) -> list[int]:
    """How many features each model represents: length above 0.5 in the small space."""
    return (S.feature_norms(W) > 0.5).sum(dim=-1).tolist()


def test_dense_features_get_a_dimension_each_and_sparse_ones_share():
    """5 features in 2 dimensions: dense (p = 1), the model keeps 2, the most important, one dimension each
    (interference 0 between them); sparse (p = 0.03), all 5 share the plane (more than one feature per dimension)."""
    run = S.train_toy([1.0, 0.03], n=5, m=2, steps=2000, seed=0)
    assert kept(run.W) == [2, 5]
    dense = run.W[0]
    assert S.feature_norms(dense)[:2].min() > 0.9                               # features 0 and 1: the important ones
    assert abs(float(S.interference(dense[None])[0, 0, 1])) < 0.05               # at right angles
    assert float(S.dimensions_per_feature(run.W)[0]) > 0.9 > 0.5 > float(S.dimensions_per_feature(run.W)[1])
    assert float(S.superposition(run.W)[1].mean()) > 0.5 > float(S.superposition(run.W)[0, :2].max())


def test_without_the_relu_sparse_features_do_not_superpose():
    run = S.train_toy([1.0, 0.03], n=5, m=2, relu=False, steps=2000, seed=0)
    assert kept(run.W) == [2, 2]


def test_the_loss_is_the_importance_weighted_error_of_each_model_alone():
    x = torch.tensor([[[1.0, 0.0], [0.5, 0.5]]])                  # (K=1, n=2, batch=2)
    x_hat = torch.zeros_like(x)
    I = torch.tensor([1.0, 0.5])
    # column 0: 1 * 1 + 0.5 * 0.25; column 1: 0 + 0.5 * 0.25; the mean of the two
    torch.testing.assert_close(S.weighted_loss(x, x_hat, I), torch.tensor([(1.125 + 0.125) / 2]))
    g = torch.Generator().manual_seed(0)
    feats = S.sparse_features(torch.tensor([1.0, 0.1]), 6, 4000, g)
    assert feats.shape == (2, 6, 4000) and float((feats[0] > 0).float().mean()) > 0.99
    assert 0.08 < float((feats[1] > 0).float().mean()) < 0.12 and float(feats.max()) <= 1


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="m < n"):
        S.ToyModel(1, n=3, m=3)
    with pytest.raises(ValueError, match=r"probability that a feature is active"):
        S.sparse_features(torch.tensor([0.0]), 5, 10, torch.Generator())
    with pytest.raises(ValueError, match=r"I must be \(n,\) = \(5,\)"):
        S.train_toy([0.1], n=5, m=2, I=torch.ones(4), steps=1)
    with pytest.raises(ValueError, match=r"activations as columns, \(d_in, N\)"):
        S.train_sae(torch.zeros(3, 4, 5), 8)


def test_a_sparse_autoencoder_finds_features_stored_in_superposition():
    """16 sparse features in 8 dimensions (random directions): an autoencoder with 32 latents, trained on the
    activations alone, has a latent along nearly every feature's direction and fires few latents per activation."""
    g = torch.Generator().manual_seed(0)
    D = torch.randn(8, 16, generator=g)
    D /= D.norm(dim=0)
    x = S.sparse_features(torch.tensor([0.05]), 16, 20000, g)[0]              # (16, N)
    acts = D @ x
    sae = S.train_sae(acts, 32, l1=0.1, steps=2000, batch=256, lr=3e-3, seed=0)
    f, z_hat = sae(acts[:, :2000])
    assert S.l0(f) < 4 and S.reconstruction_error(acts[:, :2000], z_hat) < 0.1
    found = (D.T @ sae.W_dec.detach()).max(dim=1).values                      # (16,): the best cosine per feature
    assert int((found > 0.85).sum()) >= 12, found
    torch.testing.assert_close(sae.W_dec.detach().norm(dim=0), torch.ones(32))  # decoder columns of length 1


def test_loss_recovered_is_one_for_a_perfect_reconstruction_and_reads_the_hook_point():
    model = fresh_model(Config(n_vocab=11, d_model=8, n_ctx=6, n_layers=1, n_heads=2, d_mlp=16), seed=0)
    with torch.no_grad():                                         # an MLP loud enough that zeroing it shows
        for W in (model.blocks[0].mlp.W_1, model.blocks[0].mlp.W_2, model.embed.W_E, model.unembed.W_U):
            W.mul_(30)
    tokens = torch.randint(0, 11, (4, 7), generator=torch.Generator().manual_seed(1))
    exact = S.SparseAutoencoder(16, 32)
    with torch.no_grad():                                         # f = (ReLU(z), ReLU(-z)), z' = ReLU(z) - ReLU(-z) = z
        exact.W_enc.copy_(torch.cat([torch.eye(16), -torch.eye(16)]))
        exact.W_dec.copy_(torch.cat([torch.eye(16), -torch.eye(16)], dim=1))
        exact.b_enc.zero_()
        exact.b_dec.zero_()
    got = S.loss_recovered(model, tokens, names.key(0, "z"), exact)
    assert got["reconstructed"] == pytest.approx(got["clean"], abs=1e-5)
    assert got["recovered"] == pytest.approx(1, abs=1e-3)
    assert abs(got["zeroed"] - got["clean"]) > 0.05
    silent = S.SparseAutoencoder(16, 32)
    with torch.no_grad():
        silent.b_enc.fill_(-1e3)                                  # no latent ever fires: z' = b_dec = 0
    assert S.loss_recovered(model, tokens, names.key(0, "z"), silent)["recovered"] == pytest.approx(0, abs=1e-3)


def test_loss_recovered_says_when_there_is_nothing_to_recover():
    model = fresh_model(Config(n_vocab=11, d_model=8, n_ctx=6, n_layers=1, n_heads=2, d_mlp=16), seed=0)
    with pytest.raises(ValueError, match="nothing to recover"):                # untrained: its MLP is near silent
        S.loss_recovered(model, torch.randint(0, 11, (4, 7)), names.key(0, "z"), S.SparseAutoencoder(16, 32))


# --- the toy models' sweep, and the autoencoder on notebook 06's facts model ------------------------------------------

def test_the_sweep_trains_one_model_per_decay_and_probability_in_the_explorers_order():
    run = S.sweep([1.0, 0.01], [0.9, 1.0], steps=1, seed=0)
    assert run.p.tolist() == pytest.approx([1.0, 0.01, 1.0, 0.01])
    assert run.I[1].tolist() == pytest.approx([0.9 ** i for i in range(5)])      # model 1: decay 0.9, p = 0.01
    assert run.I[2].tolist() == pytest.approx([1.0] * 5)                         # model 2: decay 1.0, p = 1


@pytest.fixture(scope="module")
def facts():
    """A small facts model (notebook 06's shape, fewer facts), an autoencoder on its z, and the task's tensors."""
    from helpers.lessons.facts import FactsTask

    task = FactsTask.make(n_people=8, n_things=4, n_colours=6, seed=3)
    model = S.fact_model(task, seed=0, steps=150)
    prompts, answers = task.prompts()
    z = S.last_hidden(model, prompts)
    sae = S.train_sae(z, 64, l1=0.3, steps=200, batch=32, lr=3e-3, seed=0)
    return model, prompts, answers, z, sae


def test_the_real_z_put_back_gives_the_model_its_own_answers(facts):
    from helpers.lessons.facts import answer_logits

    model, prompts, answers, z, _ = facts
    assert z.shape == (model.cfg.d_mlp, len(prompts))
    torch.testing.assert_close(S.logits_with(model, prompts, z), answer_logits(model, prompts).detach())
    with pytest.raises(ValueError, match=r"one column of d_mlp = 128 numbers per prompt"):
        S.logits_with(model, prompts, z.T)


def test_the_parts_add_up_to_z_and_to_the_reconstruction(facts):
    _, _, _, z, sae = facts
    col = z[:, 5]
    torch.testing.assert_close(S.parts(col).sum(dim=0), col)
    torch.testing.assert_close(S.parts(col, sae).sum(dim=0) + sae.b_dec.detach(), sae(col[:, None])[1][:, 0].detach())


def test_a_units_push_is_what_taking_it_out_does_to_the_right_colours_logit(facts):
    model, prompts, answers, z, sae = facts
    for unit_sae in (None, sae):
        push = S.pushes(model, answers, z, unit_sae)                  # (units, N)
        i = 2
        k = int(push[:, i].abs().argmax())
        moved = z.clone()
        moved[:, i] -= S.parts(z[:, i], unit_sae)[k]
        before = S.logits_with(model, prompts, z)[i, answers[i]]
        after = S.logits_with(model, prompts, moved)[i, answers[i]]
        assert float(before - after) == pytest.approx(float(push[k, i]), abs=1e-4)


def test_units_needed_is_the_greedy_search_of_exercise_6_2(facts):
    """The batched count equals a plain loop: take units out in order of push, one more each time, until the first
    guess is wrong."""
    model, prompts, answers, z, sae = facts
    for unit_sae in (None, sae):
        got = S.units_needed(model, prompts, answers, z, unit_sae, most=12)
        push = S.pushes(model, answers, z, unit_sae)
        for i in range(0, len(prompts), 5):
            order = push[:, i].argsort(descending=True)[:12]
            moved, count = z.clone(), 13
            for size, k in enumerate(order.tolist(), start=1):
                moved[:, i] -= S.parts(z[:, i], unit_sae)[k]
                if S.logits_with(model, prompts, moved)[i].argmax() != answers[i]:
                    count = size
                    break
            assert int(got[i]) == count, (i, unit_sae is None)


def test_steering_adds_the_top_unit_of_one_fact_to_another(facts):
    model, prompts, answers, z, sae = facts
    ok, pairs = S.steered(model, prompts, answers, z, sae, shift=3)
    assert len(ok) == len(pairs) and all(answers[i] != answers[j] for i, j in pairs.tolist())
    i, j = pairs[0].tolist()
    push = S.pushes(model, answers, z, sae)
    moved = z.clone()
    moved[:, j] += S.parts(z[:, i], sae)[push[:, i].argmax()]
    assert bool(ok[0]) == bool(S.logits_with(model, prompts, moved)[j].argmax() == answers[i])


def test_the_loss_recovered_is_one_for_z_itself_and_zero_for_zeros(facts):
    model, prompts, answers, z, _ = facts
    assert S.facts_loss_recovered(model, prompts, answers, z, z)["recovered"] == pytest.approx(1.0)
    assert S.facts_loss_recovered(model, prompts, answers, z, torch.zeros_like(z))["recovered"] == pytest.approx(0.0)


def test_shared_label_is_the_share_of_a_units_facts_with_its_most_common_label():
    fires = torch.tensor([[True, True, True, False], [True, False, False, False], [False, True, True, True]])
    labels = torch.tensor([0, 0, 1, 1])
    # unit 0: labels 0, 0, 1 -> 2/3; unit 1 fires once (left out); unit 2: 0, 1, 1 -> 2/3
    assert S.shared_label(fires, labels).tolist() == pytest.approx([2 / 3, 2 / 3])
    assert S.shared_label(fires[1:2], labels).numel() == 0


def test_leak_cut_is_the_share_of_one_feature_read_outs_the_relu_makes_zero():
    """Two features at 60 degrees (leak 0.5 each way) and a third opposite the first (leak -1): with b = -0.25 a
    positive leak 0.5 x_j is cut while x_j <= 0.5, a negative one always; the same by sampling x_j."""
    import math

    W = torch.tensor([[1.0, math.cos(math.pi / 3), -1.0], [0.0, math.sin(math.pi / 3), 0.0]])
    b = torch.full((3,), -0.25)
    leak = W.T @ W
    xs = torch.linspace(0, 1, 100_001)
    sampled = [float((torch.relu(leak[i, j] * xs + b[i]) == 0).float().mean())
               for i in range(3) for j in range(3) if i != j]
    assert S.leak_cut(W, b) == pytest.approx(sum(sampled) / len(sampled), abs=1e-3)
    assert S.leak_cut(W, torch.zeros(3)) == pytest.approx(4 / 6)    # no bias: only the negative leaks are cut
