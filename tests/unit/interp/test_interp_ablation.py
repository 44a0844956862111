"""helpers.interp.ablation: zero and mean ablation of heads and neurons, worked out by hand on a tiny
model, and the model is exactly as before afterwards — also after an exception inside the block."""

import pytest
import torch
from support.interp_models import uniform_model

from helpers.interp.ablation import ablated, mean_activations
from helpers.model.config import Config
from helpers.model.names import key
from helpers.train import fresh_model

T = torch.tensor([0, 1, 2])  # x0 = (1,0), (0,1), (2,2); o = (1,0), (.5,.5), (1,1); x1 = (2,0), (.5,1.5), (3,3)


def test_zero_ablating_the_only_head_leaves_the_embedding():
    model = uniform_model()
    torch.testing.assert_close(model(T)[:, 2], torch.tensor([3.0, 3.0, 0.0]))
    with ablated(model, heads=[(0, 0)]):
        torch.testing.assert_close(model(T)[:, 2], torch.tensor([2.0, 2.0, 0.0]))  # W_U x0 only
        _, cache = model.run_with_cache(T)
        assert cache[key(0, "o_heads")].abs().max() == 0 and cache[key(0, "o")].abs().max() == 0
        assert cache[key(0, "A")][0, 2, 0] == pytest.approx(1 / 3)  # the pattern is still computed
    torch.testing.assert_close(model(T)[:, 2], torch.tensor([3.0, 3.0, 0.0]))


@pytest.mark.parametrize("positions, mean", [(None, (5 / 6, 0.5)), ([0], (1.0, 0.0)), (slice(1, None), (0.75, 0.75))])
def test_mean_ablation_uses_the_stated_positions(positions, mean):
    """Mean of o over the reference text [0, 1, 2]: all positions ((1 + .5 + 1)/3, (0 + .5 + 1)/3),
    or the stated ones."""
    model = uniform_model()
    means = mean_activations(model, T[None], heads=[(0, 0)], positions=positions)
    torch.testing.assert_close(means["head", 0, 0], torch.tensor(mean))
    with ablated(model, heads=(0, 0), how="mean", reference=T[None], positions=positions):
        logits = model(T)  # x1 = x0 + mean at every position
    x0 = torch.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, 2.0]])
    torch.testing.assert_close(logits[:2], x0 + torch.tensor(mean)[:, None])


def test_mean_over_several_texts():
    model = uniform_model()
    ref = torch.tensor([[0, 0], [1, 1]])  # o = (1,0),(1,0) and (0,1),(0,1): mean (0.5, 0.5)
    torch.testing.assert_close(mean_activations(model, ref, heads=[(0, 0)])["head", 0, 0], torch.tensor([0.5, 0.5]))


def test_neuron_ablation_by_hand():
    model = uniform_model(mlp=True)  # z = ReLU(x1), m = z, so x2 = 2 x1 when x1 >= 0
    torch.testing.assert_close(model(T)[:, 2], torch.tensor([6.0, 6.0, 0.0]))
    with ablated(model, neurons=[(0, 0)]):
        torch.testing.assert_close(model(T)[:, 2], torch.tensor([3.0, 6.0, 0.0]))
        _, cache = model.run_with_cache(T)
        assert torch.equal(cache[key(0, "z")][0], torch.zeros(3))
        torch.testing.assert_close(cache[key(0, "m")], cache[key(0, "z")])  # m = W_2 z + b_2 with the edited z
    z_mean = mean_activations(model, T[None], neurons=[(0, 1)])["neuron", 0, 1]  # z_1 = x1[1] = 0, 1.5, 3
    assert float(z_mean) == pytest.approx(1.5)
    with ablated(model, neurons=[(0, 1)], how="mean", reference=T[None]):
        torch.testing.assert_close(model(T)[:, 2], torch.tensor([6.0, 4.5, 0.0]))


def test_means_come_from_a_clean_run_even_inside_an_ablation():
    model = uniform_model()
    clean = mean_activations(model, T[None], heads=[(0, 0)])["head", 0, 0]
    with ablated(model, heads=[(0, 0)]):
        torch.testing.assert_close(mean_activations(model, T[None], heads=[(0, 0)])["head", 0, 0], clean)
        torch.testing.assert_close(model(T)[:, 2], torch.tensor([2.0, 2.0, 0.0]))  # still ablated afterwards


def test_ablations_nest_and_combine():
    model = uniform_model(mlp=True)
    with ablated(model, heads=[(0, 0)]):
        with ablated(model, neurons=[(0, 0), (0, 1)]):
            torch.testing.assert_close(model(T)[:, 2], torch.tensor([2.0, 2.0, 0.0]))  # x0 only
        torch.testing.assert_close(model(T)[:, 2], torch.tensor([4.0, 4.0, 0.0]))  # x0 + ReLU(x0)
    with ablated(model, heads=[(0, 0)], neurons=[(0, 0)]):
        torch.testing.assert_close(model(T)[:, 2], torch.tensor([2.0, 4.0, 0.0]))


def _snapshot(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_the_model_is_unchanged_afterwards_even_after_an_exception():
    model = fresh_model(Config(n_vocab=20, d_model=16, n_ctx=8, n_layers=2, n_heads=4, d_mlp=32, layernorm=True))
    ids = torch.tensor([[1, 2, 3, 4, 5], [5, 4, 3, 2, 1]])
    before, weights = model(ids), _snapshot(model)
    with pytest.raises(RuntimeError, match="inside the block"):
        with ablated(model, heads=[(0, 1), (1, 3)], neurons=[(1, 7)], how="mean", reference=ids):
            assert not torch.equal(model(ids), before)
            raise RuntimeError("an error inside the block")
    assert not any(p.fns for p in model.hook_points.values())
    assert all(torch.equal(v, weights[k]) for k, v in model.state_dict().items())
    assert torch.equal(model(ids), before)


def test_a_bad_pair_changes_nothing():
    model = fresh_model(Config(n_vocab=20, d_model=16, n_ctx=8, n_layers=2, n_heads=4))
    with pytest.raises(ValueError, match="head 4 does not exist: layer 1 has n_heads = 4"):
        with ablated(model, heads=[(0, 1), (1, 4)]):
            pass
    assert not any(p.fns for p in model.hook_points.values())


def test_bad_arguments_are_explained():
    model = uniform_model()
    with pytest.raises(ValueError, match="layer 0 has no MLP: this model is attention-only"):
        with ablated(model, neurons=[(0, 0)]):
            pass
    with pytest.raises(ValueError, match="layer 2 does not exist: this model has n_layers = 1"):
        with ablated(model, heads=[(2, 0)]):
            pass
    with pytest.raises(ValueError, match="mean ablation needs reference texts"):
        with ablated(model, heads=[(0, 0)], how="mean"):
            pass
    with pytest.raises(ValueError, match="how must be 'zero' or 'mean'"):
        with ablated(model, heads=[(0, 0)], how="resample"):
            pass
    with pytest.raises(ValueError, match="with how='zero' leave them out"):
        with ablated(model, heads=[(0, 0)], reference=T[None]):
            pass
    with pytest.raises(TypeError, match="as \\(layer, index\\) pairs"):
        with ablated(model, heads=[0]):
            pass
    with pytest.raises(ValueError, match="n_ctx is 6"):
        mean_activations(model, torch.zeros(1, 7, dtype=torch.long), heads=[(0, 0)])
    with pytest.raises(ValueError, match="token id 3 is outside the vocabulary"):
        mean_activations(model, torch.tensor([[0, 3]]), heads=[(0, 0)])
    with pytest.raises(ValueError, match="positions \\[5\\] go outside the reference texts"):
        mean_activations(model, T[None], heads=[(0, 0)], positions=[5])


def test_means_computed_once_ablate_as_their_reference_does():
    model = uniform_model(mlp=True)
    ref = torch.tensor([[0, 2, 1], [1, 1, 0]])
    means = mean_activations(model, ref, heads=[(0, 0)], neurons=[(0, 1)])
    with torch.no_grad():
        with ablated(model, heads=[(0, 0)], neurons=[(0, 1)], how="mean", reference=ref):
            from_reference = model(T)
        with ablated(model, heads=[(0, 0)], neurons=[(0, 1)], how="mean", means=means):
            from_means = model(T)
    assert torch.equal(from_reference, from_means)
    with pytest.raises(ValueError, match="not both"):
        with ablated(model, heads=[(0, 0)], how="mean", reference=ref, means=means):
            pass
    with pytest.raises(ValueError, match="with how='zero' leave them out"):
        with ablated(model, heads=[(0, 0)], means=means):
            pass
    with pytest.raises(ValueError, match="no mean for neuron 0.0"):
        with ablated(model, neurons=[(0, 0)], how="mean", means=means):
            pass
    with pytest.raises(TypeError, match="the dict mean_activations returns"):
        with ablated(model, heads=[(0, 0)], how="mean", means=[0.5, 0.5]):
            pass
    assert not any(p.fns for p in model.hook_points.values())


def test_means_per_position_replace_each_position_with_its_own_mean(small_cfg):
    """per_position=True: o^h and z_i averaged over the texts only, one mean per position, and an ablation with them
    gives position j the mean at j (notebook 11's fixed-length probe)."""
    from helpers.model.names import key as name

    model = fresh_model(small_cfg, seed=2)
    reference = torch.randint(0, small_cfg.n_vocab, (5, 6), generator=torch.Generator().manual_seed(1))
    tokens = torch.randint(0, small_cfg.n_vocab, (3, 6), generator=torch.Generator().manual_seed(2))
    means = mean_activations(model, reference, heads=[(1, 0)], neurons=[(0, 3)], per_position=True)
    _, ref_cache = model.run_with_cache(reference)
    torch.testing.assert_close(means["head", 1, 0], ref_cache[name(1, "o_heads")][:, 0].mean(0))   # (d_model, n)
    torch.testing.assert_close(means["neuron", 0, 3], ref_cache[name(0, "z")][:, 3].mean(0))        # (n,)
    assert not torch.allclose(means["head", 1, 0], means["head", 1, 0].mean(-1, keepdim=True))  # positions differ
    with ablated(model, heads=[(1, 0)], neurons=[(0, 3)], how="mean", means=means):
        _, cache = model.run_with_cache(tokens)
    torch.testing.assert_close(cache[name(1, "o_heads")][:, 0], means["head", 1, 0].expand(3, -1, -1))
    torch.testing.assert_close(cache[name(0, "z")][:, 3], means["neuron", 0, 3].expand(3, -1))
    pooled = mean_activations(model, reference, heads=[(1, 0)])
    torch.testing.assert_close(pooled["head", 1, 0], means["head", 1, 0].mean(-1))


def test_means_per_position_refuse_a_longer_text_and_fit_a_shorter_one(small_cfg):
    model = fresh_model(small_cfg, seed=2)
    means = mean_activations(model, torch.zeros(2, 4, dtype=torch.long), heads=[(0, 1)], per_position=True)
    with pytest.raises(ValueError, match=r"per position over texts of n = 4 tokens, and the text ablated has n = 6"):
        with ablated(model, heads=[(0, 1)], how="mean", means=means):
            model(torch.zeros(1, 6, dtype=torch.long))
    with ablated(model, heads=[(0, 1)], how="mean", means=means):  # a shorter text takes the first positions' means
        _, cache = model.run_with_cache(torch.zeros(1, 3, dtype=torch.long))
    torch.testing.assert_close(cache[key(0, "o_heads")][0, 1], means["head", 0, 1][:, :3])
    with pytest.raises(ValueError, match="leave positions out"):
        mean_activations(model, torch.zeros(2, 6, dtype=torch.long), heads=[(0, 1)], per_position=True, positions=[0])


def test_means_over_texts_of_different_lengths_weigh_every_position_alike(small_cfg):
    """A list of texts of different lengths (the heads explorer's reference): each run alone, the mean over every
    position of every text, as if they were one batch of positions."""
    from helpers.model.names import key as name

    model = fresh_model(small_cfg, seed=2)
    texts = [torch.tensor([1, 2, 3, 4, 5]), torch.tensor([7, 1]), torch.tensor([0, 9, 9])]
    means = mean_activations(model, texts, heads=[(1, 1)], neurons=[(1, 0)])
    o = torch.cat([model.run_with_cache(t)[1][name(1, "o_heads")][1] for t in texts], dim=-1)   # (d_model, 10)
    z = torch.cat([model.run_with_cache(t)[1][name(1, "z")][0] for t in texts])                 # (10,)
    torch.testing.assert_close(means["head", 1, 1], o.mean(-1))
    torch.testing.assert_close(means["neuron", 1, 0], z.mean())
    with pytest.raises(ValueError, match="no position in common"):
        mean_activations(model, texts, heads=[(1, 1)], per_position=True)
