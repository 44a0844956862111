"""helpers.interp.paths: one head's output taken out of one path only.

On ``two_layer_model`` (tests/support/interp_models.py) every number is worked out by hand, for the text "0 1" and the
prediction made at its second position. Layer 0's head 0 attends uniformly and copies, so
    x0 = [(1, 0), (0, 1)],  o^{0.0} = [(1, 0), (0.5, 0.5)],  x1 = [(2, 0), (0.5, 1.5)].
Layer 1's head 0 scores s_j = x_2 . x_j / sqrt 2 and copies x_j; its head 1 averages x_1 and x_2. The logits are
the final stream (W_U = I).
"""

import math

import pytest
import torch

from helpers.interp.ablation import ablated, mean_activations
from helpers.interp.paths import path_ablated
from helpers.model import names
from helpers.model.config import Config
from helpers.train import fresh_model
from support.interp_models import two_layer_model, uniform_model

R2 = math.sqrt(2)
TEXT = torch.tensor([0, 1])
X1 = [(2.0, 0.0), (0.5, 1.5)]  # x1 at positions 1 and 2
O00 = (0.5, 0.5)  # layer 0 head 0's output at position 2


def _softmax2(s0, s1):
    e0, e1 = math.exp(s0), math.exp(s1)
    return e0 / (e0 + e1), e1 / (e0 + e1)


def _mix(a, u, v):
    return (a[0] * u[0] + a[1] * v[0], a[0] * u[1] + a[1] * v[1])


def _add(*vectors):
    return tuple(sum(c) for c in zip(*vectors))


def _final(head0, head1, x=X1[1]):
    """Logits at position 2: x1 + layer 1's two head outputs (W_U = I)."""
    return _add(x, head0, head1)


# layer 1, intact: head 0 with q = (0.5, 1.5), keys x1, values x1; head 1 the mean of x1
A_INTACT = _softmax2((0.5 * 2) / R2, (0.25 + 2.25) / R2)
HEAD0 = _mix(A_INTACT, *X1)
HEAD1 = (1.25, 0.75)


def _logits(model, head=None, **path):
    with torch.no_grad():
        if head is not None:
            with path_ablated(model, head, **path):
                out = model(TEXT)[:, 1]
        else:
            out = model(TEXT)[:, 1]
    return tuple(round(float(v), 5) for v in out)


def _same(got, expected):
    assert got == pytest.approx(expected, abs=1e-5), (got, expected)


def test_the_intact_model_gives_the_numbers_worked_out_by_hand():
    _same(_logits(two_layer_model()), _final(HEAD0, HEAD1))


def test_keys_only_head_0_1_matches_its_query_against_keys_without_layer_0():
    # keys read x0 = (1, 0), (0, 1); the query (0.5, 1.5) and the values x1 are untouched
    a = _softmax2(0.5 / R2, 1.5 / R2)
    expected = _final(_mix(a, *X1), HEAD1)
    model = two_layer_model()
    _same(_logits(model, head=(0, 0), to=(1, 0, "k")), expected)
    _same(_logits(model, head=(0, 0), to=(1, "k")), expected)  # head 1's keys don't matter (W_K = 0)


def test_queries_only_leave_keys_and_values_as_they_were():
    a = _softmax2(0.0, 1.5 / R2)  # the query is x0_2 = (0, 1)
    _same(_logits(two_layer_model(), head=(0, 0), to=(1, "q")), _final(_mix(a, *X1), HEAD1))


def test_values_only_of_one_reader_head():
    # head 1 averages x0 instead of x1: (0.5, 0.5); head 0 intact
    _same(_logits(two_layer_model(), head=(0, 0), to=(1, 1, "v")), _final(HEAD0, (0.5, 0.5)))
    # every head's values: head 0 keeps its pattern and copies x0
    _same(_logits(two_layer_model(), head=(0, 0), to=(1, "v")),
          _final(_mix(A_INTACT, (1.0, 0.0), (0.0, 1.0)), (0.5, 0.5)))


def test_the_direct_path_only_changes_the_final_stream():
    expected = _add(_final(HEAD0, HEAD1), (-O00[0], -O00[1]))
    _same(_logits(two_layer_model(), head=(0, 0), to="logits"), expected)


def test_mean_replacement_puts_the_reference_mean_on_the_path():
    # the mean of o^{0.0} over the reference "0 1", both positions: ((1, 0) + (0.5, 0.5)) / 2 = (0.75, 0.25)
    expected = _add(_final(HEAD0, HEAD1), (-O00[0], -O00[1]), (0.75, 0.25))
    _same(_logits(two_layer_model(), head=(0, 0), to="logits", how="mean", reference=TEXT[None]), expected)


def test_a_head_that_writes_nothing_changes_nothing_on_any_path():
    model = two_layer_model()
    _same(_logits(model, head=(0, 1), to=[(1, "q"), (1, "k"), (1, "v"), "logits"]), _final(HEAD0, HEAD1))


def test_every_path_at_once_is_the_whole_head_switched_off(small_attention_cfg, small_cfg):
    for cfg in (small_attention_cfg, small_cfg):
        model = fresh_model(cfg, seed=1)
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(30)  # big weights: sharp patterns, so a wrong path shows
        ids = torch.randint(11, (3, 6), generator=torch.Generator().manual_seed(0))
        has_mlp = cfg.d_mlp > 0
        every = [(layer, kind) for layer in range(1, cfg.n_layers) for kind in "qkv"] + ["logits"]
        every += [(layer, "mlp") for layer in range(cfg.n_layers)] if has_mlp else []
        with torch.no_grad():
            with ablated(model, heads=[(0, 1)]):
                whole = model(ids)
            with path_ablated(model, (0, 1), every):
                paths = model(ids)
            with path_ablated(model, (0, 1), every[:-1]):
                all_but_one = model(ids)
        assert torch.allclose(whole, paths, atol=1e-4), cfg
        assert not torch.allclose(whole, all_but_one, atol=1e-2), "leaving one path in place changes nothing?"


def test_keys_path_in_a_layernorm_model_normalises_the_edited_stream(small_cfg):
    model = fresh_model(small_cfg, seed=2)
    ids = torch.randint(11, (6,), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        _, clean = model.run_with_cache(ids)
        with path_ablated(model, (0, 0), (1, 1, "k")):
            _, cache = model.run_with_cache(ids)
        block = model.blocks[1]
        x1, o = clean[names.resid(2)], clean[names.key(0, "o_heads")][0]   # (the MLP of layer 0 writes x2)
        k_expected = block.attn.W_K[1] @ block.ln_attn(x1 - o)
        assert torch.allclose(cache[names.key(1, "k")][1], k_expected, atol=1e-5)
        assert torch.allclose(cache[names.key(1, "k")][0], clean[names.key(1, "k")][0], atol=1e-6)  # other head
        for what in ("q", "v"):
            assert torch.allclose(cache[names.key(1, what)], clean[names.key(1, what)], atol=1e-6)
        assert torch.allclose(cache[names.key(0, "o_heads")], clean[names.key(0, "o_heads")])  # the head itself


def test_the_mlp_path_of_the_heads_own_layer():
    model = uniform_model(mlp=True)  # z = ReLU(x1), m = z
    ids = torch.tensor([0, 1])
    with torch.no_grad():
        _, clean = model.run_with_cache(ids)
        with path_ablated(model, (0, 0), (0, "mlp")):
            _, cache = model.run_with_cache(ids)
    # the MLP reads x1 - o = x0: z = ReLU(x0) = x0 for these tokens
    assert torch.allclose(cache[names.key(0, "z")], clean[names.resid(0)])
    assert torch.allclose(cache[names.resid(1)], clean[names.resid(1)])   # the stream itself still holds o


def test_blocks_nest_and_the_model_is_restored_even_after_an_error():
    model = two_layer_model()
    with torch.no_grad():
        with path_ablated(model, (0, 0), (1, "q")):
            with path_ablated(model, (0, 0), (1, "k")):
                both = model(TEXT)[:, 1]
        with path_ablated(model, (0, 0), [(1, "q"), (1, "k")]):
            together = model(TEXT)[:, 1]
    assert torch.allclose(both, together)
    with pytest.raises(RuntimeError, match="inside"):
        with path_ablated(model, (0, 0), "logits"):
            raise RuntimeError("inside")
    assert not any(p.fns for p in model.hook_points.values())
    _same(_logits(model), _final(HEAD0, HEAD1))


@pytest.mark.parametrize("head, to, message", [
    ((0, 0), (0, "k"), "layer 0's heads cannot read head 0.0"),
    ((1, 0), (1, 0, "q"), "layer 1's heads cannot read head 1.0"),
    ((1, 0), (0, "k"), "cannot read"),
    ((0, 0), (1, "z"), "'z' is not a path"),
    ((0, 0), (1, "mlp"), "layer 1 has no MLP"),
    ((0, 0), (1, 5, "k"), "head 5 does not exist"),
    ((0, 0), (4, "k"), "layer 4 does not exist"),
    ((0, 7), "logits", "head 7 does not exist"),
    ((3, 0), "logits", "layer 3 does not exist"),
    ((0, 0), [], "name at least one path"),
    ((0, 0), ("logits", 1), "not a path"),
    ((0, 0), 5, "not a path"),
])
def test_bad_paths_are_named(head, to, message):
    model = two_layer_model()
    with pytest.raises((ValueError, TypeError), match=message):
        with path_ablated(model, head, to):
            pass
    _same(_logits(model), _final(HEAD0, HEAD1))


def test_bad_replacements_are_named():
    model = two_layer_model()
    with pytest.raises(ValueError, match="needs reference texts"):
        with path_ablated(model, (0, 0), "logits", how="mean"):
            pass
    with pytest.raises(ValueError, match="leave them out"):
        with path_ablated(model, (0, 0), "logits", reference=TEXT[None]):
            pass
    with pytest.raises(ValueError, match="'zero' or 'mean'"):
        with path_ablated(model, (0, 0), "logits", how="resample"):
            pass
    for bad in (0, [], [(0, 0, 1)], "0.0"):
        with pytest.raises(TypeError, match="pair"):
            with path_ablated(model, bad, "logits"):
                pass


def test_several_heads_at_once_are_the_sum_of_their_outputs(small_attention_cfg):
    model = fresh_model(small_attention_cfg, seed=3)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(30)  # big weights: sharp patterns, so a wrong path shows
    ids = torch.randint(11, (2, 6), generator=torch.Generator().manual_seed(2))
    writers = [(0, 0), (1, 1)]
    every = [(2, kind) for kind in "qkv"] + ["logits"]
    with torch.no_grad():
        with path_ablated(model, writers, every):
            together = model(ids)
        with path_ablated(model, (0, 0), every + [(1, "q"), (1, "k"), (1, "v")]), ablated(model, heads=[(1, 1)]):
            whole = model(ids)  # head 1.1 read nothing of 0.0 here, so this equals both heads switched off
        with ablated(model, heads=writers):
            off = model(ids)
    assert torch.allclose(whole, off, atol=1e-5)
    assert not torch.allclose(together, off, atol=1e-3)   # layer 1 still read head 0.0 in `together`
    with pytest.raises(ValueError, match="layer 1's heads cannot read head 1.1"):
        with path_ablated(model, writers, (1, "k")):
            pass


def test_means_computed_once_replace_as_their_reference_does():
    model = two_layer_model()
    means = mean_activations(model, TEXT[None], heads=[(0, 0)])
    _same(_logits(model, head=(0, 0), to="logits", how="mean", means=means),
          _logits(model, head=(0, 0), to="logits", how="mean", reference=TEXT[None]))
    with pytest.raises(ValueError, match="not both"):
        with path_ablated(model, (0, 0), "logits", how="mean", reference=TEXT[None], means=means):
            pass
    with pytest.raises(ValueError, match="leave them out"):
        with path_ablated(model, (0, 0), "logits", means=means):
            pass
    with pytest.raises(ValueError, match="no mean for head 0.1"):
        with path_ablated(model, (0, 1), "logits", how="mean", means=means):
            pass


@pytest.mark.parametrize("how", ["zero", "mean"])
def test_nested_cuts_give_each_reader_the_writers_before_it(how):
    """Notebook 11's cut: head 1.0's keys lose head 0.0, head 2.0's keys lose heads 0.0 and 1.1 (one block per set
    of writers, nested), each key computed from the stream minus those outputs plus their means (or 0)."""
    cfg = Config(n_vocab=11, d_model=8, n_ctx=6, n_layers=3, n_heads=2, d_mlp=16, layernorm=True)
    model = fresh_model(cfg, seed=4)
    ids = torch.randint(11, (2, 6), generator=torch.Generator().manual_seed(3))
    ref = torch.randint(11, (3, 6), generator=torch.Generator().manual_seed(4))
    means = mean_activations(model, ref, heads=[(0, 0), (1, 1)])
    extra = {"means": means} if how == "mean" else {}
    with torch.no_grad():
        with path_ablated(model, (0, 0), (1, 0, "k"), how=how, **extra), \
                path_ablated(model, [(0, 0), (1, 1)], (2, 0, "k"), how=how, **extra):
            _, cache = model.run_with_cache(ids)
    o00, o11 = cache[names.key(0, "o_heads")][:, 0], cache[names.key(1, "o_heads")][:, 1]
    m00, m11 = ((means["head", 0, 0], means["head", 1, 1]) if how == "mean" else (torch.zeros(8), torch.zeros(8)))
    x_into_1, x_into_2 = cache[names.resid(2)], cache[names.resid(4)]   # the stream entering layers 1 and 2
    k10 = model.blocks[1].attn.W_K[0] @ model.blocks[1].ln_attn(x_into_1 - o00 + m00[:, None])
    k20 = model.blocks[2].attn.W_K[0] @ model.blocks[2].ln_attn(x_into_2 - o00 - o11 + (m00 + m11)[:, None])
    assert torch.allclose(cache[names.key(1, "k")][:, 0], k10, atol=1e-5)
    assert torch.allclose(cache[names.key(2, "k")][:, 0], k20, atol=1e-5)
    assert not torch.allclose(cache[names.key(2, "k")][:, 0],
                              model.blocks[2].attn.W_K[0] @ model.blocks[2].ln_attn(x_into_2), atol=1e-3)
    assert not any(p.fns for p in model.hook_points.values())


def test_a_path_cut_to_means_per_position(small_attention_cfg):
    """With per-position means, the direct path reads, at position j, the head's mean output at j instead of o^h:
    logits move by W_U (mean_j - o^h_j) (no final LayerNorm in this model)."""
    model = fresh_model(small_attention_cfg, seed=4)
    reference = torch.randint(0, 11, (4, 5), generator=torch.Generator().manual_seed(3))
    tokens = torch.randint(0, 11, (2, 5), generator=torch.Generator().manual_seed(4))
    means = mean_activations(model, reference, heads=[(0, 1)], per_position=True)
    logits, cache = model.run_with_cache(tokens)
    with torch.no_grad(), path_ablated(model, (0, 1), "logits", how="mean", means=means):
        cut = model(tokens)
    moved = model.unembed.W_U @ (means["head", 0, 1] - cache[names.key(0, "o_heads")][:, 1])   # (2, n_vocab, 5)
    torch.testing.assert_close(cut, logits + moved, rtol=1e-5, atol=1e-5)
