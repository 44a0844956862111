"""A press on the page, in a real Jupyter kernel: the two-step answer (helpers/widgets/later.py) of the heads explorer
(a head switched off) and of the logit-lens explorer (a new prompt typed).

The browser is played by this test: it sends the widget message a press sends (``comm_msg``, "update", the switch's
new value) and reads what the kernel publishes. What must hold: the kernel says "idle" after the first step (head
greyed, guesses coming; or the prompt, lens coming) and before the second (the guesses without the head; the lens),
so the page is answered before the model runs; the second step arrives on its own; and what it shows is what a redraw
answered whole shows.
"""

import json
import time

import pytest
from jupyter_client.manager import start_new_kernel

pytestmark = pytest.mark.slow  # a press on the page, in a Jupyter kernel

SETUP = r"""
import json
from helpers.data import default_data
from helpers.model import Config
from helpers.train import fresh_model
from helpers.widgets.attention import HeadsExplorer
tok = default_data().tokenizer
model = fresh_model(Config(n_vocab=tok.n_vocab, d_model=64, n_ctx=32, n_layers=2, n_heads=4), seed=0)
HeadsExplorer.SPLIT_ABOVE = -1.0  # every run counts as long (GPT-2 Small's shapes are too big for a test)
text = "and god said , let there be light"
ex = HeadsExplorer(model, tok, text=text, layer=1)
whole = HeadsExplorer(model, tok, text=text, layer=1)
whole.switches[2].value = False  # from a cell: answered whole
print(json.dumps({"control": ex.switches[2].model_id, "caption": ex.caption.model_id}))
"""

LENS_SETUP = r"""
import json
from helpers.data import default_data
from helpers.model import Config
from helpers.train import fresh_model
from helpers.widgets.ladder import LensExplorer
tok = default_data().tokenizer
model = fresh_model(Config(n_vocab=tok.n_vocab, d_model=64, n_ctx=32, n_layers=2, n_heads=4, d_mlp=128), seed=0)
LensExplorer.SPLIT_ABOVE = -1.0  # every redraw counts as long (GPT-2 Small's shapes are too big for a test)
ex = LensExplorer(model, tok, prompt="and god said")
whole = LensExplorer(model, tok, prompt="and the children of")  # from a cell: answered whole
print(json.dumps({"control": ex.text.model_id, "caption": ex.caption.model_id}))
"""

CASES = {  # setup, the value the page sends, the first step's mark, what each step's caption says
    "heads": (SETUP, False, "guesses=coming", "running from layer 1", "loss on this text"),
    "lens": (LENS_SETUP, "and the children of", "lens=coming", "the lens is being computed", "the likeliest next"),
}


def _run(kc, code: str) -> str:
    out = []
    reply = kc.execute_interactive(code, output_hook=out.append, timeout=120)
    assert reply["content"]["status"] == "ok", reply["content"]
    return "".join(m["content"].get("text", "") for m in out if m["msg_type"] == "stream")


@pytest.mark.parametrize("case", list(CASES))
def test_a_press_on_the_page_is_answered_before_the_model_runs(case):
    setup, value, mark, says_first, says_second = CASES[case]
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        ids = json.loads(_run(kc, setup).strip().splitlines()[-1])
        press = kc.session.msg("comm_msg", {"comm_id": ids["control"], "data": {
            "method": "update", "state": {"value": value}, "buffer_paths": []}})
        kc.shell_channel.send(press)
        events, deadline = [], time.monotonic() + 60
        while time.monotonic() < deadline and not any(mark not in e and e.startswith("caption")
                                                      for e in events[1:]):
            msg = kc.get_iopub_msg(timeout=60)
            content = msg["content"]
            if msg["msg_type"] == "status":
                events.append(content["execution_state"])
            elif msg["msg_type"] == "comm_msg" and content.get("comm_id") == ids["caption"]:
                value = content["data"].get("state", {}).get("value", "")
                events.append("caption " + value)
        captions = [i for i, e in enumerate(events) if e.startswith("caption")]
        idle = events.index("idle")
        assert len(captions) == 2, events
        first, second = (events[i] for i in captions)
        assert mark in first and says_first in first
        assert captions[0] < idle < captions[1], events          # answered, then the model ran
        assert mark not in second and says_second in second
        same = ("drawn = lambda e: (e.caption.value.replace(e.caption_id, 'ID'), e.view.value.replace(e.caption_id, "
                "'ID'))\nprint(drawn(ex) == drawn(whole))")  # each caption has its own id, which its picture names
        assert _run(kc, same).strip() == "True"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
