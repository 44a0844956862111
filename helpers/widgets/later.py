"""A redraw in two steps, for an explorer whose answer needs a long model run (notebook 11's heads explorer on
GPT-2 Small: switching a head off for the first time runs ten layers and unembeds every position, ~0.2 s on one
core, and the browser adds as much again; its logit-lens explorer on a prompt not seen before, ~0.4 s).

The press is answered at once with what it changes without the model (the switched-off head greyed, the guesses
"being computed"), and the model runs right after the kernel has replied, on the kernel's own event loop, in its main
thread. Doing it there, and not in a background thread, is deliberate: an intervention is attached to the shared
model while it runs (``helpers.interp.ablation.ablated``), and a cell the learner runs meanwhile must never see it. A
request that arrives while the model runs waits for it, as any request waits for a busy kernel.

Only a change made on the page is split so (the kernel's current request is a widget message, ``comm_msg``); a change
made by code in a cell, in a test or outside a kernel is answered whole before the call returns, as before.

``TwoSteps`` is the plumbing an explorer mixes in (``class HeadsExplorer(TwoSteps, Explorer)``): its ``render`` asks
``self.leave_for_later(cost)`` and, when told yes, draws the quick answer with ``{self.COMING: "coming"}`` in its
state; the mixin then runs the whole redraw after the reply.
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
    scheduled) when no loop is running here, so the caller runs it now. A loop set for this thread that is not
    running or is closed (one that Playwright's sync API, say, leaves behind) counts as none: ``fn`` would never run."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    if not loop.is_running() or loop.is_closed():
        return False
    loop.call_soon(fn)
    return True


def pass_cost(cfg, n: int) -> float:
    """Multiply-adds of one forward pass over n tokens (up to n_ctx), with every head on: per token, each layer's
    W_Q, W_K, W_V, W_O (4 d_model^2) and MLP (2 d_model d_mlp), and the unembedding (n_vocab d_model); attention's
    n^2 terms are left out (small here). A count from the config, not a timing, so that every machine and every test
    splits alike."""
    n = min(n, cfg.n_ctx)
    layer = 4 * cfg.d_model ** 2 + (2 * cfg.d_model * cfg.d_mlp if cfg.d_mlp else 0)
    return float(n * (cfg.n_layers * layer + cfg.n_vocab * cfg.d_model))


class TwoSteps:
    """Mixed into an Explorer (before it in the bases) whose redraw may need a long model run.

    ``update`` notes whether the change came from the page; ``render`` calls ``leave_for_later(cost)`` and, if True,
    draws at once what it can without the model and puts ``{COMING: "coming"}`` in its state. After the reply (or at
    once, when no event loop runs here) the redraw is made again whole, for the controls' values at that moment: if
    the learner has changed them meanwhile, for their latest choice, and not at all if that was answered whole."""

    SPLIT_ABOVE = 1e9  # multiply-adds of a redraw above which a press is answered in two steps: ~25 ms on one core at
    # 40 GFLOP/s; GPT-2 Small's shapes, never the series' own models or the GPT-2-shaped stand-in
    COMING = "guesses"  # the state's key that says the second step is due (its value "coming")
    _split = False  # this redraw may leave the model run for after the reply (a change on the page)

    def update(self, *args):
        self._split = from_the_page()  # (render decides whether the run is long enough to leave for later)
        try:
            super().update(*args)
        finally:
            self._split = False
        if self.coming() and not after_reply(self._finish):
            self._finish()  # (no event loop to leave it to: answered whole)

    def coming(self) -> bool:
        """The picture shown is the quick first step: the second is due."""
        return self.last_state.get(self.COMING) == "coming"

    def leave_for_later(self, cost: float) -> bool:
        """Whether this redraw, whose model run costs ``cost`` multiply-adds, should show its quick step now."""
        return self._split and cost > self.SPLIT_ABOVE

    def _finish(self) -> None:
        """The second step: the whole redraw, for the controls as they are now (only if still due)."""
        if self.coming():
            super().update()
