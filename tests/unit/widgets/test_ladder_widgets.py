"""Notebook 08's explorers: the ladder of models side by side and the logit lens (one pass per new prompt, and on
GPT-2 Small's shapes a typed prompt answered in two steps)."""

import pytest
import torch

from helpers.model.config import Config
from helpers.train import fresh_model


def test_ladder_explorer_shows_every_model_and_explains_bad_prompts(zero_layer_word_model):
    from helpers.data import default_data
    from helpers.ngrams import bigram_probs
    from helpers.widgets.ladder import LadderExplorer

    data = default_data()
    models = {"zero": zero_layer_word_model,
              "one": fresh_model(Config(n_vocab=data.n_vocab, d_model=8, n_ctx=6, n_layers=1, n_heads=2, d_mlp=16), 0)}
    e = LadderExplorer(models, data.tokenizer, bigram_probs(data.train_ids[:5000], data.n_vocab), prompt="and god")
    assert 'data-state="prompt=and god;n=2"' in e.caption.value and "bigram" in e.caption.value
    e.text.value = "   "
    assert "gt-error" in e.caption.value and "empty" in e.caption.value
    e.text.value = "in the beginning god created the heaven"
    assert "n=4" in e.caption.value and "were cut" in e.caption.value


def test_lens_explorer_reads_every_state_and_follows_the_final_guess(zero_layer_word_model):
    from helpers.data import default_data
    from helpers.interp.lens import logit_lens
    from helpers.model import checkpoint
    from helpers.widgets.ladder import LensExplorer, state_labels

    data = default_data()
    model = checkpoint.load_named("long_full2_s0")[0]
    assert state_labels(model) == {"x0": "the embedding", "x1": "+ layer 0 attention", "x2": "+ layer 0 MLP",
                                   "x3": "+ layer 1 attention", "x4": "+ layer 1 MLP"}
    e = LensExplorer(model, data.tokenizer, prompt="and the children of")
    p = logit_lens(model, torch.tensor([data.tokenizer.index[w] for w in "and the children of".split()]))
    israel = data.tokenizer.vocab.index("israel")
    assert e.last_state == {"prompt": "and the children of", "state": "x4", "top": "israel", "final": "israel"}
    assert f"{float(p[2, israel]):.2f}" in e.caption.value and "nearly 0" in e.caption.value   # x0 gives ~0.001
    e.state.value = "x1"
    assert e.last_state["top"] == data.tokenizer.vocab[int(p[1].argmax())] != "israel"
    assert "read from x1 (+ layer 0 attention)" in e.caption.value and "x1 orange" in e.view.value
    e.text.value = ""
    assert "gt-error" in e.caption.value and "empty" in e.caption.value
    with pytest.raises(ValueError, match="needs a model with layers"):
        LensExplorer(zero_layer_word_model, data.tokenizer)


def _lens_model():
    from helpers.data import default_data

    tok = default_data().tokenizer
    return fresh_model(Config(n_vocab=tok.n_vocab, d_model=32, n_ctx=16, n_layers=2, n_heads=2, d_mlp=64), 0), tok


def _drawn(ex):
    """An explorer's caption and picture, without the caption's own id (which its picture names)."""
    return ex.caption.value.replace(ex.caption_id, "ID"), ex.view.value.replace(ex.caption_id, "ID")


def test_the_lens_explorer_runs_the_model_only_for_a_new_prompt():
    """One pass per new prompt, kept for the last three prompts and keyed by the model's state too: another state to
    read from runs no model, nor does a prompt kept; a fourth prompt drops the oldest; a weight edited in place (even
    through .data, which torch does not count) is seen."""
    from helpers.model.hooks import hooked
    from helpers.widgets.ladder import LensExplorer

    model, tok = _lens_model()
    passes = []
    prompts = ["and god said", "and the children of", "let there be", "in the beginning"]
    with hooked(model, {"x0": lambda t: passes.append(t.shape) and None}):
        e = LensExplorer(model, tok, prompt=prompts[0])
        assert len(passes) == 1
        for state in ("x1", "x0", "x3"):
            e.state.value = state
        assert len(passes) == 1 and "read from x3" in e.caption.value
        e.text.value = prompts[1]
        assert len(passes) == 2
        e.state.value = "x2"
        e.text.value = prompts[0]                                      # kept
        assert len(passes) == 2 and e.last_state["state"] == "x2"
        e.text.value = prompts[2]
        e.text.value = prompts[3]                                      # the fourth: the first is dropped
        e.text.value = prompts[1]
        assert len(passes) == 4
        e.text.value = prompts[0]
        assert len(passes) == 5
        with torch.no_grad():
            model.blocks[1].mlp.W_2.mul_(3.0)                          # an edit in place
        e.state.value = "x4"
        assert len(passes) == 6 and _drawn(e) == _drawn(LensExplorer(model, tok, prompt=prompts[0]))
        model.blocks[1].mlp.W_2.data.mul_(0.0)                          # .data: no version counted
        e.state.value = "x2"
        e.state.value = "x4"
        assert len(passes) == 8 and _drawn(e) == _drawn(LensExplorer(model, tok, prompt=prompts[0]))


def test_a_new_prompt_on_gpt2_small_is_answered_in_two_steps(monkeypatch):
    """When a new prompt's lens costs more than SPLIT_ABOVE multiply-adds (GPT-2 Small's shapes), a prompt typed on the
    page is answered at once with the prompt, a caption saying the lens is being computed and a placeholder
    (lens=coming), and the model runs after the reply: the second step shows exactly what a redraw answered whole
    shows. A prompt kept and another state are answered whole at once; a change made by code is answered whole; a
    prompt the learner replaces before the second step costs no run of its own."""
    from helpers.model.hooks import hooked
    from helpers.widgets import later
    from helpers.widgets.ladder import LensExplorer

    model, tok = _lens_model()
    a, b, c = "and god said", "and the children of", "let there be"
    whole = LensExplorer(model, tok, prompt=b)
    whole.state.value = "x2"
    passes = []
    with hooked(model, {"x0": lambda t: passes.append(t.shape) and None}):
        ex = LensExplorer(model, tok, prompt=a)                         # a cell: answered whole
        assert ex.last_state["top"] and "lens" not in ex.last_state
        queued = []
        monkeypatch.setattr(later, "from_the_page", lambda: True)
        monkeypatch.setattr(later, "after_reply", lambda fn: queued.append(fn) or True)
        monkeypatch.setattr(LensExplorer, "SPLIT_ABOVE", -1.0)          # every redraw counts as long
        passes.clear()
        ex.state.value = "x2"                                           # the prompt's lens is kept: whole, no run
        assert passes == [] and queued == [] and ex.last_state["top"]
        ex.text.value = b
        assert passes == [] and len(queued) == 1                        # answered before the model ran
        assert ex.last_state == {"prompt": b, "state": "x2", "lens": "coming"}
        assert "the lens is being computed" in ex.caption.value and f"after '{b}'" in ex.caption.value
        assert 'class="gt-coming"' in ex.view.value and "lens=coming" in ex.view.value and "<svg" not in ex.view.value
        queued.pop()()                                                  # the kernel has replied: the second step
        assert len(passes) == 1 and "lens" not in ex.last_state
        assert _drawn(ex) == _drawn(whole)

        ex.text.value = c                                               # typed ...
        ex.text.value = b                                               # ... and replaced before the second step
        assert ex.last_state["top"] and "lens" not in ex.last_state     # (b is kept: whole at once)
        assert len(queued) == 1
        queued.pop()()
        assert len(passes) == 1 and _drawn(ex) == _drawn(whole)
        monkeypatch.setattr(later, "from_the_page", lambda: False)      # a cell sets the prompt: whole
        ex.text.value = c
        assert len(passes) == 2 and "lens" not in ex.last_state and queued == []


def test_only_gpt2_smalls_size_splits_the_lens(larger_than_any_series_model):
    """The lens's split is decided by counting, as the heads explorer's is: GPT-2 Small's shapes from one token on;
    the GPT-2-shaped stand-in CI runs on, and the series' own models, never."""
    from helpers.gpt2.convert import small_config
    from helpers.gpt2.stand_in import stand_in_config
    from helpers.widgets.ladder import LensExplorer

    cost, split = LensExplorer.redraw_cost, LensExplorer.SPLIT_ABOVE
    gpt2 = small_config()
    assert cost(gpt2, 1) > split and cost(gpt2, 10_000) == cost(gpt2, gpt2.n_ctx)
    assert cost(stand_in_config(), 128) < split
    assert cost(larger_than_any_series_model, 128) < split
