"""The attention explorers: right state in the caption, learner mistakes shown not raised, fast redraws."""

import re

import pytest
import torch

from helpers.data import default_data
from helpers.model.config import Config
from helpers.train import fresh_model
from helpers.model.names import key
from helpers.model.transformer import mask_switched
from helpers.widgets.attention import LastTokenExplorer, PatternExplorer


@pytest.fixture(scope="module")
def model_and_tok():
    tok = default_data().tokenizer
    cfg = Config(n_vocab=tok.n_vocab, d_model=64, n_ctx=32, n_layers=2, n_heads=4)
    return fresh_model(cfg, seed=0), tok


def test_pattern_explorer_state_and_controls(model_and_tok):
    ex = PatternExplorer(*model_and_tok, text="in the beginning god created the heaven")
    assert 'data-state="layer=0;head=0;mask=on;query=7;text=in the beginning god created the heaven"' \
        in ex.caption.value
    assert ex.view.value.count("<tr") == 1 + 7  # header + one row per token
    ex.layer.value, ex.head.value, ex.mask.value = 1, 3, False
    assert "layer=1;head=3;mask=off" in ex.caption.value and "peeking" in ex.caption.value
    ex.query.value = 3
    assert "query=3" in ex.caption.value and "Query 3" in ex.caption.value
    ex.text.value = "and god said"  # shorter text: the query row follows into range
    assert ex.query.max == 3 and "query=3" in ex.caption.value


def test_pattern_explorer_counts_positions_from_1(model_and_tok):
    """Slider, caption, data-state and the outlined row all use the post's numbering (1..n)."""
    ex = PatternExplorer(*model_and_tok, text="in the beginning god created the heaven")
    assert (ex.query.min, ex.query.max, ex.query.value) == (1, 7, 7)  # opens on the last token
    assert "query i" in ex.query.description
    ex.query.value = 3  # token 3 is "beginning"
    cap = ex.caption.value
    assert 'query=3;' in cap and "Query 3 (<code>beginning</code>)" in cap
    assert "only sees tokens 1..i" in cap
    assert '<tr class=sel><th class="q">beginning</th>' in ex.view.value  # the outlined row is token 3
    assert ex.view.value.count("<tr class=sel>") == 1
    assert "query 3: &#x27;beginning&#x27; attends to" in ex.view.value
    ex.query.value = 1  # the first token can only attend to itself
    assert "Query 1 (<code>in</code>) puts most weight (1.00) on <code>in</code> (position 1)" in ex.caption.value
    ex.text.value = "in the beginning god created the heaven and the earth"  # longer: the slider grows
    assert ex.query.max == 10 and ex.query.value == 1


def test_mask_switched_restores_even_on_error(model_and_tok):
    model, _ = model_and_tok
    ids = torch.tensor([3, 4, 5, 6])
    with mask_switched(model, on=False):
        assert not any(b.attn.masked for b in model.blocks)
        _, cache = model.run_with_cache(ids)
        assert (cache[key(0, "A")].triu(1) > 0).any()  # the future gets weight
    assert all(b.attn.masked for b in model.blocks)
    with pytest.raises(AssertionError):
        with mask_switched(model, on=False):
            assert False, "a failing assert inside the block"
    assert all(b.attn.masked for b in model.blocks)  # restored anyway
    with pytest.raises(TypeError, match="True"):
        with mask_switched(model, on="off"):
            pass
    assert all(b.attn.masked for b in model.blocks)


def test_score_heatmap_centred_at_0_masked_grey():
    """Notebook 04's S panel: white means score 0, the -inf cells are grey (not white)."""
    import matplotlib.colors as mcolors
    import numpy as np
    from matplotlib.figure import Figure

    from helpers.plots.attention import MASKED_GREY, score_heatmap

    S = torch.tensor([[-2.1, float("-inf")], [0.9, -0.6]])
    ax = score_heatmap(Figure().subplots(), S, ["a", "b"], title="S")
    im = ax.images[0]
    assert im.norm.vcenter == 0 and im.norm.vmin == pytest.approx(-2.1) and im.norm.vmax == pytest.approx(2.1)
    assert mcolors.to_hex(im.cmap(np.nan)) == MASKED_GREY
    assert mcolors.to_hex(im.cmap(im.norm(0.0))) != MASKED_GREY
    assert "grey" in ax.get_title() and "−∞" in ax.get_title()


def test_mask_on_gives_no_weight_to_the_future(model_and_tok):
    ex = PatternExplorer(*model_and_tok, text="and god said , let there be light")
    assert "hatched" in ex.caption.value and "peeking" not in ex.caption.value


def test_learner_mistakes_show_in_the_caption(model_and_tok):
    for cls in (PatternExplorer, LastTokenExplorer):
        ex = cls(*model_and_tok, text="   ")
        assert "gt-error" in ex.caption.value and "empty" in ex.caption.value
        ex.text.value = "the zzyzx of " + "the lord " * 30
        assert "gt-error" not in ex.caption.value
        assert "were cut" in ex.caption.value and "&lt;unk&gt;" in ex.caption.value


def test_last_token_explorer(model_and_tok):
    ex = LastTokenExplorer(*model_and_tok, text="and god said , let there be")
    assert 'data-state="head=0;n=7;text=and god said , let there be"' in ex.caption.value
    assert "without attention" in ex.caption.value and "with attention" in ex.view.value
    ex.head.value = 2
    assert "head=2" in ex.caption.value


def test_pattern_explorer_redraws_at_the_full_context(model_and_tok):
    """Every head redrawn at the full context (n_ctx = 32); how long a redraw takes is the bench's to print."""
    ex = PatternExplorer(*model_and_tok, text="the lord " * 16)
    for h in [1, 2, 3, 0]:
        ex.head.value = h
        assert f"head={h}" in ex.caption.value
    assert len(ex.seconds) >= 4


def test_padding_explorer():
    from helpers.widgets.attention import PaddingExplorer

    ex = PaddingExplorer(P=0.0)
    assert 'data-state="P=0.0"' in ex.caption.value
    ex.P.value = -30.0
    assert "[0.2689, 0.7311, 0.0000]" in ex.caption.value


def test_heads_explorer(model_and_tok):
    from helpers.widgets.attention import HeadsExplorer

    ex = HeadsExplorer(*model_and_tok, text="and god said")
    assert 'data-state="layer=0;n=3;text=and god said;head0=on;head1=on;head2=on;head3=on;off=none"' \
        in ex.caption.value
    assert ex.view.value.count('class="gt-pattern-image"') == 4
    ex.layer.value = 1
    assert "layer=1" in ex.caption.value
    ex.text.value = ""
    assert "gt-error" in ex.caption.value and "empty" in ex.caption.value


def test_heads_explorer_switches_heads_off(model_and_tok):
    """A switched-off head's output is zeroed: the guesses shown are the ablated model's, per layer."""
    from helpers.interp.ablation import ablated
    from helpers.tokens import prepare_prompt
    from helpers.widgets.attention import HeadsExplorer

    model, tok = model_and_tok
    text = "speak unto the children of"
    ex = HeadsExplorer(model, tok, text=text, layer=1)
    ids = prepare_prompt(text, tok, model.cfg.n_ctx).ids
    p_all = model.next_token_probs(ids)
    best = tok.vocab[int(p_all.argmax())]
    ex.switches[2].value = False
    assert ex.off == {(1, 2)} and ex.last_state["head2"] == "off" and ex.last_state["off"] == "1:2"
    assert not ex.switches[2].value and "(off)" in ex.view.value
    with ablated(model, heads=[(1, 2)]):
        p_off = model.next_token_probs(ids)
    assert f"p(<code>{best}</code>) after the last token: {float(p_all.max()):.2f} &rarr; " \
           f"{float(p_off[p_all.argmax()]):.2f}" in ex.caption.value
    assert "loss on this text" in ex.caption.value
    ex.layer.value = 0  # layer 0's switches are its own: all on, but layer 1 head 2 stays off
    assert all(sw.value for sw in ex.switches) and ex.off == {(1, 2)}
    assert ex.last_state["head2"] == "on" and ex.last_state["off"] == "1:2"
    ex.switches[0].value = False
    assert ex.off == {(0, 0), (1, 2)}
    ex.layer.value = 1
    assert [sw.value for sw in ex.switches] == [True, True, False, True]
    ex.switches[2].value = True
    ex.layer.value = 0
    ex.switches[0].value = True
    assert ex.off == set() and "Every head is on" in ex.caption.value
    torch.testing.assert_close(model.next_token_probs(ids), p_all)  # the model itself is untouched


def test_the_heads_explorer_switches_heads_to_their_mean_when_given_means(model_and_tok):
    """Given every head's mean (pooled over positions: a typed text can be any length), a switched-off head's output
    is its mean, as in notebook 11's argument for a model with LayerNorms; the caption says which."""
    from helpers.interp.ablation import ablated, mean_activations
    from helpers.tokens import prepare_prompt
    from helpers.widgets.attention import HeadsExplorer

    model, tok = model_and_tok
    heads = [(L, h) for L in range(model.cfg.n_layers) for h in range(model.cfg.n_heads)]
    reference = [prepare_prompt(t, tok, model.cfg.n_ctx).ids for t in ("and god said , let there be light",
                                                                       "in the beginning")]
    means = mean_activations(model, reference, heads=heads)
    text = "speak unto the children of"
    ex = HeadsExplorer(model, tok, text=text, layer=1, means=means)
    ids = prepare_prompt(text, tok, model.cfg.n_ctx).ids
    p_all = model.next_token_probs(ids)
    ex.switches[2].value = False
    with ablated(model, heads=[(1, 2)], how="mean", means=means):
        p_mean = model.next_token_probs(ids)
    with ablated(model, heads=[(1, 2)]):
        p_zero = model.next_token_probs(ids)
    assert not torch.allclose(p_mean, p_zero)
    assert f"&rarr; {float(p_mean[p_all.argmax()]):.2f}" in ex.caption.value and "o<sup>h</sup> = its mean" in \
        ex.caption.value
    per_position = mean_activations(model, torch.stack([ids, ids]), heads=heads, per_position=True)
    with pytest.raises(ValueError, match="pooled over positions"):
        HeadsExplorer(model, tok, text=text, means=per_position)
    with pytest.raises(ValueError, match="means holds no mean for head 1.3"):
        HeadsExplorer(model, tok, text=text, means={k: v for k, v in means.items() if k != ("head", 1, 3)})


def test_the_heads_explorer_runs_the_model_only_for_what_is_new(model_and_tok):
    """One pass per new text (every layer's patterns come from it); another layer runs no model; switching a head off
    runs the model from its layer on, once per set of switched-off heads; a weight changed in place is noticed."""
    from helpers.model.hooks import hooked
    from helpers.widgets.attention import HeadsExplorer

    model, tok = model_and_tok
    passes = []
    with hooked(model, {"logits": lambda t: passes.append(t.shape) and None}):
        ex = HeadsExplorer(model, tok, text="and god said , let there be light", layer=0)
        passes.clear()
        ex.layer.value = 1
        assert passes == [] and "layer=1" in ex.caption.value
        ex.switches[2].value = False
        assert len(passes) == 1 and ex.last_state["off"] == "1:2"
        ex.switches[2].value = True
        ex.switches[2].value = False
        assert len(passes) == 1 and ex.last_state["off"] == "1:2"     # kept from the first time
        ex.text.value = "and god said , let there be"
        assert len(passes) == 3                                          # the new text, then without head 1.2
        before = ex.caption.value
        with torch.no_grad():
            model.blocks[1].attn.W_O[2].mul_(3.0)
        try:
            ex.switches[2].value = True
            assert len(passes) == 4 and ex.caption.value != before
        finally:
            with torch.no_grad():
                model.blocks[1].attn.W_O[2].div_(3.0)


def test_with_many_heads_the_patterns_are_a_compact_grid(model_and_tok):
    """GPT-2's 12 heads a layer: small pictures side by side, without the tokens along each side (the caption lists
    them; each picture's text alternative still names its weights), so a layer takes a few rows, not twelve."""
    from helpers.widgets.attention import HeadsExplorer

    _, tok = model_and_tok
    model = fresh_model(Config(n_vocab=tok.n_vocab, d_model=48, n_ctx=32, n_layers=2, n_heads=12), seed=0)
    text = "and god said , let there be light : and there was light ."
    ex = HeadsExplorer(model, tok, text=text)
    assert ex.compact and ex.view.value.count('class="gt-pattern-image"') == 12
    n = ex.last_state["n"]
    side = n * (120 // n)                                                # about 120 px a side, whatever the text
    assert f'width="{side}" height="{side}"' in ex.view.value and "rotate(180deg)" not in ex.view.value  # no labels
    assert "<code>light</code>" in ex.caption.value and 'alt="Layer 0, head 11: attention pattern' in ex.view.value
    assert not HeadsExplorer(model, tok, text=text, compact=False).compact


def test_the_heads_explorer_shows_what_the_model_does_now(model_and_tok):
    """Its kept results are the model's as it is: the loss shown with a head off is the ablated model's loss (on
    weights far from their start, so that a wrong number shows), also with the causal mask off, where a column sees
    its own answer and the loss is computed the long way; an edit through .data (which torch does not count) and an
    intervention attached around it are noticed."""
    from helpers.interp.ablation import ablated
    from helpers.interp.loss import per_position_loss
    from helpers.model.transformer import mask_switched
    from helpers.tokens import prepare_prompt
    from helpers.widgets.attention import HeadsExplorer

    _, tok = model_and_tok
    model = fresh_model(Config(n_vocab=tok.n_vocab, d_model=64, n_ctx=32, n_layers=2, n_heads=4), seed=1)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(25.0)                                     # confident guesses, a loss far from ln n_vocab
    text = "and god said , let there be light"
    ids = prepare_prompt(text, tok, model.cfg.n_ctx).ids

    def shown_loss(ex):
        after = ex.caption.value.split("loss on this text")[1]
        return [float(x) for x in re.findall(r"\d+\.\d+", after)[:2]]

    for mask_on in (True, False):
        with mask_switched(model, on=mask_on):
            ex = HeadsExplorer(model, tok, text=text, layer=1)
            ex.switches[2].value = False
            want_all = float(per_position_loss(model, ids).mean())
            with ablated(model, heads=[(1, 2)]):
                want_off = float(per_position_loss(model, ids).mean())
            assert shown_loss(ex) == pytest.approx([want_all, want_off], abs=0.006), mask_on
    ex = HeadsExplorer(model, tok, text=text, layer=1)
    before = ex.caption.value
    model.blocks[1].attn.W_O.data.mul_(0.0)                   # .data: no version counted
    ex.layer.value = 0
    ex.layer.value = 1
    assert ex.caption.value != before
    with ablated(model, heads=[(0, 0)]):
        ex.text.value = text + " ."
        inside = ex.caption.value
    ex.layer.value = 0
    ex.layer.value = 1
    assert ex.caption.value != inside                        # not the ablated model's results, kept


def same_drawing(a, b) -> bool:
    """Two explorers show the same caption and picture (each caption has its own id, which its picture names)."""
    def drawn(ex):
        return ex.caption.value.replace(ex.caption_id, "ID"), ex.view.value.replace(ex.caption_id, "ID")
    return drawn(a) == drawn(b)


def test_a_long_model_run_is_answered_in_two_steps(model_and_tok, monkeypatch):
    """When a pass costs more than SPLIT_ABOVE multiply-adds (GPT-2 Small's shapes), a head switched off on the page
    for the first time is answered at once with the head greyed and the guesses coming, and the model runs after the
    reply: the second step shows exactly what a redraw answered whole shows. A change made by code (a cell, this
    test without the page) is answered whole; a press the learner takes back before the second step costs no run."""
    from helpers.model.hooks import hooked
    from helpers.widgets import attention, later

    model, tok = model_and_tok
    text = "and god said , let there be light"
    whole = attention.HeadsExplorer(model, tok, text=text, layer=1)
    whole.switches[2].value = False                                    # not from the page: whole, as always
    assert "guesses" not in whole.last_state and "loss on this text" in whole.caption.value

    queued = []
    monkeypatch.setattr(later, "from_the_page", lambda: True)
    monkeypatch.setattr(later, "after_reply", lambda fn: queued.append(fn) or True)
    monkeypatch.setattr(attention.HeadsExplorer, "SPLIT_ABOVE", -1.0)     # every run counts as long
    passes = []
    with hooked(model, {"logits": lambda t: passes.append(t.shape) and None}):
        ex = attention.HeadsExplorer(model, tok, text=text, layer=1)
        passes.clear()
        ex.switches[2].value = False
        assert passes == [] and len(queued) == 1                       # answered before the model ran
        assert ex.last_state["guesses"] == "coming" and ex.last_state["head2"] == "off"
        assert "running the model without them" in ex.view.value and "(off)" in ex.view.value
        assert "the guesses and the loss follow" in ex.caption.value and "loss on this text" not in ex.caption.value
        queued.pop()()                                                  # the kernel has replied: the second step
        assert len(passes) == 1 and "guesses" not in ex.last_state
        assert same_drawing(ex, whole)

        ex.switches[1].value = False                                    # pressed ...
        ex.switches[1].value = True                                     # ... and taken back before the second step
        for fn in queued:
            fn()
        assert len(passes) == 1 and same_drawing(ex, whole)
    monkeypatch.setattr(attention.HeadsExplorer, "SPLIT_ABOVE", 1e18)     # a small model: never split
    small = attention.HeadsExplorer(model, tok, text=text, layer=1)
    small.switches[2].value = False
    assert "guesses" not in small.last_state


def test_the_second_step_waits_for_the_kernels_reply():
    """helpers.widgets.later outside a kernel: no event loop, nothing scheduled (the caller answers whole); inside a
    running loop the step is queued, not run; a loop left set but not running (as Playwright's sync API can leave one
    in a thread) or closed counts as none. Asked from a fresh thread of the test's own: the worker's main thread may
    hold a loop another test left there."""
    import asyncio
    import threading

    from helpers.widgets import later

    ran, failed = [], []

    def ask():
        try:
            assert not later.from_the_page() and not later.after_reply(lambda: ran.append(1)) and ran == []

            async def inside():
                assert later.after_reply(lambda: ran.append(1)) and ran == []
                await asyncio.sleep(0)
                assert ran == [1]
            asyncio.run(inside())
            for close in (False, True):
                left = asyncio.new_event_loop()
                if close:
                    left.close()
                asyncio._set_running_loop(left)            # set for this thread, never run
                try:
                    assert not later.after_reply(lambda: ran.append(2)), close
                finally:
                    asyncio._set_running_loop(None)
                    left.close()
            assert ran == [1]
        except BaseException as e:  # handed to the test's own thread
            failed.append(e)

    worker = threading.Thread(target=ask)
    worker.start()
    worker.join(60)
    assert not worker.is_alive()
    if failed:
        raise failed[0]


def test_only_gpt2_smalls_size_is_answered_in_two_steps(larger_than_any_series_model):
    """The split is decided by counting a pass's multiply-adds, not by timing it: GPT-2 Small's shapes on notebook 11's
    text split (and do from 9 tokens on); the GPT-2-shaped stand-in CI and the browser tests run, and the series' own
    models, never do, on any machine."""
    from helpers.gpt2.convert import small_config
    from helpers.gpt2.stand_in import stand_in_config
    from helpers.widgets.attention import HeadsExplorer

    def cost(cfg, n):
        return HeadsExplorer.pass_cost(cfg, n)

    gpt2, split = small_config(), HeadsExplorer.SPLIT_ABOVE
    assert cost(gpt2, 17) > split and cost(gpt2, 9) > split > cost(gpt2, 8)
    assert cost(gpt2, 10_000) == cost(gpt2, gpt2.n_ctx)                 # a text is cut to the context
    assert cost(stand_in_config(), 128) < split
    assert cost(larger_than_any_series_model, 128) < split
