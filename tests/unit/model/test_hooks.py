"""The model's one seam (helpers/model/hooks.py): every activation passes a hook point named as the cache names it,
the cache and every intervention go through those points, and a new kind of intervention needs no change to the
model."""

import pytest
import torch

from helpers.model import names
from helpers.model.config import Config
from helpers.model.hooks import cached_names, hooked, suspended
from helpers.train import fresh_model

CFG = Config(n_vocab=20, d_model=16, n_ctx=8, n_layers=2, n_heads=4, d_mlp=32, layernorm=True)
TOKENS = torch.tensor([[1, 5, 2, 7, 3, 9], [4, 4, 8, 1, 0, 2]])


@pytest.fixture
def model():
    return fresh_model(CFG, seed=3)


def test_the_points_are_the_caches_names_in_the_order_of_the_forward_pass(model):
    _, cache = model.run_with_cache(TOKENS)
    assert list(cache) == cached_names(model)
    assert [k for k in cache if names.is_resid(k)] == model.resid_names() == ["x0", "x1", "x2", "x3", "x4"]
    reads = [name for name, p in model.hook_points.items() if not p.cached]
    assert reads == [names.read(layer, r) for layer in (0, 1) for r in names.READS] + [names.FINAL]
    assert not any(p.fns for p in model.hook_points.values())   # the cache is taken off after the pass


def test_a_new_intervention_needs_no_change_to_the_model(model):
    """Freeze layer 1's pattern to attend to the first token only: an edit of "L1.A" that no helper offers."""
    first = torch.zeros(len(TOKENS), CFG.n_heads, 6, 6)
    first[..., 0] = 1.0
    with hooked(model, {names.key(1, "A"): lambda A: first}):
        _, cache = model.run_with_cache(TOKENS)
    assert torch.equal(cache[names.key(1, "A")], first)
    v = cache[names.key(1, "v")]
    r = cache[names.key(1, "r")]
    torch.testing.assert_close(r, v[..., :1].expand_as(v))   # r = v A^T: every column is v of token 0


def test_edits_compose_in_order_readers_see_the_result_and_errors_restore(model):
    before = model(TOKENS)
    order = []
    with hooked(model, {names.key(0, "o_heads"): lambda o: order.append("outer") or o * 0}):
        with hooked(model, {names.key(0, "o_heads"): [lambda o: order.append(float(o.abs().sum())), lambda o: None]}):
            _, cache = model.run_with_cache(TOKENS)
    assert order == ["outer", 0.0]                     # the inner edit saw the outer one's zeros
    assert torch.equal(cache[names.key(0, "o")], torch.zeros_like(cache[names.key(0, "o")]))   # and the cache saw both
    with pytest.raises(RuntimeError, match="inside"):
        with hooked(model, {"x2": lambda x: x * 2}):
            raise RuntimeError("inside")
    assert not any(p.fns for p in model.hook_points.values()) and torch.equal(model(TOKENS), before)


def test_suspended_runs_clean_inside_an_intervention(model):
    clean = model(TOKENS)
    with hooked(model, {"x1": lambda x: x * 0}):
        assert not torch.equal(model(TOKENS), clean)
        with suspended(model):
            assert torch.equal(model(TOKENS), clean)
        assert not torch.equal(model(TOKENS), clean)


def test_the_read_points_change_one_reader_only(model):
    """Doubling the stream layer 1's keys read changes layer 1's keys and nothing that comes before or reads x2."""
    _, clean = model.run_with_cache(TOKENS)
    with hooked(model, {names.read(1, "x_k"): lambda x: 2 * x}):
        _, edited = model.run_with_cache(TOKENS)
    for same in ("x2", names.key(1, "q"), names.key(1, "v")):
        assert torch.equal(edited[same], clean[same]), same
    assert not torch.allclose(edited[names.key(1, "k")], clean[names.key(1, "k")])


def test_an_unknown_point_is_named(model):
    with pytest.raises(KeyError, match=r"no hook point 'blocks.0.attn.hook_pattern'.*L0\.A"):   # TransformerLens's name
        with hooked(model, {"blocks.0.attn.hook_pattern": lambda A: A}):
            pass


def test_taking_a_function_off_takes_the_one_this_block_attached(model):
    """The same reader attached by an outer and an inner block, an edit between them: the inner block's end takes
    off its own copy, so the outer reader goes on seeing what it saw before (the edit's input, not its output)."""
    seen = []
    with hooked(model, {names.key(0, "o"): seen.append}):
        with hooked(model, {names.key(0, "o"): [lambda o: o * 0, seen.append]}):
            pass
        seen.clear()
        model(TOKENS)
    assert len(seen) == 1 and seen[0].abs().sum() > 0


def test_the_lens_inside_a_patch_of_a_big_batch(model):
    """The logit lens runs the whole batch in one pass: a patch from a clean run of 20 texts fits it."""
    from helpers.interp.lens import logit_lens
    from helpers.interp.patching import patched

    tokens = torch.randint(0, CFG.n_vocab, (20, 6), generator=torch.Generator().manual_seed(0))
    _, clean = model.run_with_cache(tokens)
    with patched(model, clean, "x1"):
        p = logit_lens(model, tokens.flip(-1))
    assert p.shape == (20, 5, CFG.n_vocab)
    torch.testing.assert_close(p[:, 1], torch.softmax(model.read_out(clean["x1"][..., -1:]), dim=-2)[..., 0])


@pytest.mark.parametrize("d_mlp", [0, 32])
def test_a_pass_can_start_from_the_stream_entering_any_block(d_mlp):
    """run_from(L, x) on the state stream_into(L) names gives the forward pass's logits, bit for bit: what patching and
    the heads explorer use to skip the layers an edit leaves alone."""
    model = fresh_model(Config(n_vocab=20, d_model=16, n_ctx=8, n_layers=3, n_heads=2, d_mlp=d_mlp), seed=0)
    logits, cache = model.run_with_cache(torch.tensor([[1, 4, 2, 7, 3], [0, 9, 9, 5, 1]]))
    assert [model.stream_into(layer) for layer in range(3)] == (["x0", "x2", "x4"] if d_mlp else ["x0", "x1", "x2"])
    with torch.no_grad():
        for layer in range(3):
            assert torch.equal(model.run_from(layer, cache[model.stream_into(layer)]), logits)


def test_a_pass_can_stop_at_the_final_stream(model):
    """read_out=False ends the pass at x_final, the stream the unembedding would read (the logit lens reads its states
    so, without the n_vocab-tall logits of every position): the same states as a whole pass, no logits, no p."""
    _, cache = model.run_with_cache(TOKENS)
    with torch.no_grad():
        x_final = model(TOKENS, read_out=False)
        single = model(TOKENS[0], read_out=False)
    assert x_final.shape == (2, CFG.d_model, TOKENS.shape[1]) and single.shape == (CFG.d_model, TOKENS.shape[1])
    torch.testing.assert_close(model.read_out(x_final), cache[names.LOGITS])
    torch.testing.assert_close(single, x_final[0])
    seen = []
    spies = {names.LOGITS: lambda x: seen.append("logits") or x, names.PROBS: lambda x: seen.append("p") or x}
    with hooked(model, spies):
        model(TOKENS, read_out=False)
    assert seen == []
