"""A press on the page, in a real Jupyter kernel: the heads explorer's two-step answer (helpers/widgets/later.py).

The browser is played by this test: it sends the widget message a press sends (``comm_msg``, "update", the switch's
new value) and reads what the kernel publishes. What must hold: the kernel says "idle" after the first step (head
greyed, guesses coming) and before the second (the guesses without the head), so the page is answered before the
model runs; the second step arrives on its own; and what it shows is what a redraw answered whole shows.
"""

import json
import time

from jupyter_client.manager import start_new_kernel

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
print(json.dumps({"switch": ex.switches[2].model_id, "caption": ex.caption.model_id}))
"""


def _run(kc, code: str) -> str:
    out = []
    reply = kc.execute_interactive(code, output_hook=out.append, timeout=120)
    assert reply["content"]["status"] == "ok", reply["content"]
    return "".join(m["content"].get("text", "") for m in out if m["msg_type"] == "stream")


def test_a_press_on_the_page_is_answered_before_the_model_runs():
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        ids = json.loads(_run(kc, SETUP).strip().splitlines()[-1])
        press = kc.session.msg("comm_msg", {"comm_id": ids["switch"], "data": {
            "method": "update", "state": {"value": False}, "buffer_paths": []}})
        kc.shell_channel.send(press)
        events, deadline = [], time.monotonic() + 60
        while time.monotonic() < deadline and not any("guesses=coming" not in e and e.startswith("caption")
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
        assert "guesses=coming" in first and "running from layer 1" in first
        assert captions[0] < idle < captions[1], events          # answered, then the model ran
        assert "guesses=coming" not in second and "loss on this text" in second
        same = ("drawn = lambda e: (e.caption.value.replace(e.caption_id, 'ID'), e.view.value.replace(e.caption_id, "
                "'ID'))\nprint(drawn(ex) == drawn(whole))")  # each caption has its own id, which its picture names
        assert _run(kc, same).strip() == "True"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
