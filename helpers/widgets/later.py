"""A redraw in two steps, for an explorer whose answer needs a long model run (notebook 11's heads explorer on
GPT-2 Small: switching a head off for the first time runs ten layers and unembeds every position, ~0.2 s on one
core, and the browser adds as much again).

The press is answered at once with what it changes without the model (the switched-off head greyed, the guesses
"being computed"), and the model runs right after the kernel has replied, on the kernel's own event loop, in its main
thread. Doing it there, and not in a background thread, is deliberate: an intervention is attached to the shared
model while it runs (``helpers.interp.ablation.ablated``), and a cell the learner runs meanwhile must never see it. A
request that arrives while the model runs waits for it, as any request waits for a busy kernel.

Only a change made on the page is split so (the kernel's current request is a widget message, ``comm_msg``); a change
made by code in a cell, in a test or outside a kernel is answered whole before the call returns, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable


def from_the_page() -> bool:
    """True while the kernel answers a widget message from the browser (a learner's press or keystroke)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    if kernel is None or not hasattr(kernel, "get_parent"):
        return False
    try:
        parent = kernel.get_parent("shell") or {}
    except Exception:  # an older or other kernel: never split, answer whole
        return False
    return parent.get("header", {}).get("msg_type") == "comm_msg"


def after_reply(fn: Callable[[], None]) -> bool:
    """Run ``fn`` on the kernel's event loop once the current message has been answered; False (and nothing
    scheduled) when no loop is running here, so the caller runs it now."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    loop.call_soon(fn)
    return True
