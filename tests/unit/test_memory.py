"""Memory: freed memory goes back to the system after training (helpers.runtime.release_memory)."""

import subprocess
import sys

import pytest
import torch

import helpers.runtime
import helpers.train
from helpers.model.config import Config
from helpers.runtime import release_memory
from helpers.train import fresh_model

FRAGMENTED_HEAP = """
import numpy as np
from pathlib import Path
from helpers.runtime import release_memory

def rss_mb():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

big = np.ones(4 << 20, dtype=np.uint8)
del big  # freeing a 4 MB block makes glibc serve the next 1 MB blocks from its heap
blocks = [np.ones(1 << 20, dtype=np.uint8) for _ in range(80)]  # 80 MB inside the heap
last = blocks[-1]  # kept: the heap cannot simply shrink from its top
del blocks
before = rss_mb()
assert release_memory()
print(before - rss_mb())
"""


@pytest.mark.slow  # starts a Python
@pytest.mark.each_python
@pytest.mark.skipif(not sys.platform.startswith("linux") or helpers.runtime._malloc_trim() is None,
                    reason="glibc's malloc_trim only")
def test_release_memory_gives_freed_heap_memory_back():
    done = subprocess.run([sys.executable, "-c", FRAGMENTED_HEAP], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) > 50  # MB of the 79 MB freed


def test_release_memory_never_fails():
    assert release_memory() in (True, False)


def test_training_and_evaluation_release_memory_at_the_end(monkeypatch):
    calls = []
    monkeypatch.setattr(helpers.train, "release_memory", lambda: calls.append(1))
    model = fresh_model(Config(n_vocab=11, d_model=8, n_ctx=4))
    ids = torch.arange(40) % 11
    helpers.train.train(model, ids, steps=2, batch_size=2, progress=False)
    assert calls
    calls.clear()
    helpers.train.evaluate(model, ids)
    assert calls


def test_per_position_loss_a_few_texts_at_a_time_is_the_whole_batchs_loss(monkeypatch):
    """per_position_loss runs the model and takes ln p a few texts at a time (memory): the same numbers."""
    import helpers.interp.loss as loss

    model = fresh_model(Config(n_vocab=13, d_model=8, n_ctx=6, n_layers=1, n_heads=2), seed=1)
    tokens = torch.randint(13, (37, 7), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        logp = torch.log_softmax(model.unembed.W_U @ model.run_with_cache(tokens[:, :-1])[1]["x1"], dim=-2)
    whole = -logp.gather(-2, tokens[:, None, 1:]).squeeze(-2)  # (37, 6)
    monkeypatch.setattr(loss, "TEXTS_PER_PASS", 5)
    seen = spy_on_batches(monkeypatch, model)
    torch.testing.assert_close(loss.per_position_loss(model, tokens), whole, rtol=0, atol=1e-6)
    assert max(seen) == 5 and sum(seen) == 37
    torch.testing.assert_close(loss.per_position_loss(model, tokens[4]), whole[4], rtol=0, atol=1e-6)


def spy_on_batches(monkeypatch, model) -> list[int]:
    """The number of texts of every forward pass ``model`` makes from now on."""
    seen, forward = [], model.forward
    monkeypatch.setattr(model, "forward", lambda tokens: seen.append(len(tokens)) or forward(tokens))
    return seen


def test_activations_of_a_big_batch_are_run_with_caches_in_pieces(monkeypatch):
    """Transformer.activations keeps only the named activations and runs a big batch a few texts at a time."""
    import helpers.model.transformer as transformer
    from helpers.model import names

    model = fresh_model(Config(n_vocab=13, d_model=8, n_ctx=6, n_layers=2, n_heads=2, d_mlp=16), seed=1)
    tokens = torch.randint(13, (37, 6), generator=torch.Generator().manual_seed(0))
    keys = [names.key(1, "A"), names.key(0, "z"), names.resid(2), names.PROBS]
    _, whole = model.run_with_cache(tokens)
    monkeypatch.setattr(transformer, "TEXTS_PER_PASS", 5)
    seen = spy_on_batches(monkeypatch, model)
    got = model.activations(tokens, keys)
    assert list(got) == keys and max(seen) == 5 and sum(seen) == 37
    for k in keys:
        assert got[k].shape == whole[k].shape and not got[k].requires_grad
        torch.testing.assert_close(got[k], whole[k].detach(), rtol=0, atol=1e-6)
    one = model.activations(tokens[3], keys)  # a single text: no batch dimension, as in run_with_cache
    for k in keys:
        torch.testing.assert_close(one[k], whole[k][3].detach(), rtol=0, atol=1e-6)
    with pytest.raises(KeyError, match="no activation named 'L5.A'.*holds t, x0"):
        model.activations(tokens, [names.key(5, "A")])


def test_in_a_notebook_setup_releases_memory_after_every_cell(monkeypatch):
    """helpers.setup() in an IPython kernel: release_memory runs after each cell, registered once however
    often setup runs."""
    from IPython.core.interactiveshell import InteractiveShell

    calls = []
    monkeypatch.setattr(helpers.runtime, "release_memory", lambda: calls.append(1) or True)
    InteractiveShell.clear_instance()
    assert helpers.runtime.release_memory_after_every_cell() is False  # no IPython shell yet: nothing to do
    shell = InteractiveShell.instance()
    try:
        shell.run_cell("import helpers; helpers.setup(seed=0); helpers.setup(seed=1)").raise_error()
        assert calls == [1]  # once, after that cell
        shell.run_cell("x = 1").raise_error()
        shell.run_cell("raise ValueError('a learner error')")  # a cell that fails releases memory too
        assert calls == [1, 1, 1]
    finally:
        shell.events.unregister("post_run_cell", helpers.runtime._after_cell)
        InteractiveShell.clear_instance()
