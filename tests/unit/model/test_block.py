"""Blocks and attention-only models: the cache holds the post's activations in order."""

import pytest
import torch

from helpers.model.block import Block
from helpers.model.config import Config
from helpers.model.names import key
from helpers.model.hooks import Cache, caching
from helpers.model.transformer import Transformer
from helpers.tokens import EmptyTextError, prepare_prompt
from helpers.data import default_data

CFG = Config(n_vocab=40, d_model=16, n_ctx=8, n_layers=2, n_heads=4)


def test_block_adds_attention_to_the_residual_stream():
    torch.manual_seed(0)
    block = Block(CFG, layer=0)
    x = torch.randn(2, 16, 5)
    cache = Cache()
    with caching(block, cache):   # a block's hook points are its modules, named when it is built
        out = block(x)
    assert list(cache) == [key(0, name) for name in ("q", "k", "v", "S", "A", "r", "o_heads", "o")] + ["x1"]
    torch.testing.assert_close(out, x + cache[key(0, "o")])
    torch.testing.assert_close(cache["x1"], out)
    assert cache[key(0, "q")].shape == (2, 4, 4, 5) and cache[key(0, "A")].shape == (2, 4, 5, 5)
    torch.testing.assert_close(cache[key(0, "o_heads")].sum(1), cache[key(0, "o")])


def test_run_with_cache_names_and_order():
    torch.manual_seed(0)
    model = Transformer(CFG)
    logits, cache = model.run_with_cache(torch.tensor([1, 2, 3, 4, 5]))
    assert cache.resid_names == ["x0", "x1", "x2"]
    for layer in (0, 1):
        for name in ("q", "k", "v", "r"):
            assert cache[key(layer, name)].shape == (4, 4, 5)
        assert cache[key(layer, "S")].shape == cache[key(layer, "A")].shape == (4, 5, 5)
        assert cache[key(layer, "o")].shape == (16, 5)
    torch.testing.assert_close(cache["x1"], cache["x0"] + cache[key(0, "o")])
    torch.testing.assert_close(cache["x2"], cache["x1"] + cache[key(1, "o")])
    torch.testing.assert_close(logits, model.unembed.W_U @ cache["x2"])


def test_switching_the_mask_off_lets_the_future_in():
    torch.manual_seed(0)
    model = Transformer(CFG)
    t = torch.tensor([1, 2, 3, 4, 5])
    t2 = torch.tensor([1, 2, 3, 4, 6])
    torch.testing.assert_close(model(t)[:, :4], model(t2)[:, :4])
    for block in model.blocks:
        block.attn.masked = False
    assert not torch.allclose(model(t)[:, :4], model(t2)[:, :4])


def test_bad_text_is_explained():
    tok = default_data().tokenizer
    with pytest.raises(EmptyTextError, match="empty"):
        prepare_prompt("   ", tok, 8)
    p = prepare_prompt("in the beginning god created the heaven and the earth zzyzx", tok, 8)
    assert len(p.ids) == 8 and "cut" in p.notice() and "<unk>" in p.notice()
    torch.manual_seed(0)
    model = Transformer(Config(n_vocab=tok.n_vocab, d_model=16, n_ctx=8, n_layers=1, n_heads=2))
    with pytest.raises(ValueError, match="n_ctx is 8"):
        model(tok.encode("in the beginning god created the heaven and the earth"))
