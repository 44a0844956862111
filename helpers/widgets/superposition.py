"""Notebook 12: pick a feature probability (1 - the sparsity) and how fast the importances fall, see where the toy
model of superposition puts its five features in two dimensions (the runs come from
``helpers.lessons.superposition.sweep``, trained once before the explorer opens: a redraw only reads them)."""

from __future__ import annotations

import ipywidgets as W

from helpers.lessons.superposition import ToyRun, dimensions_per_feature, feature_norms
from helpers.plots import svg
from helpers.plots.superposition import directions
from helpers.widgets.base import Explorer, choice


class ToyExplorer(Explorer):
    """A slider over the feature probabilities p and buttons for the importance decay (I_i = decay^i): left, the five
    features' directions (columns of W); right, each feature's length. The caption: how many features are kept (length
    above 0.5), the dimensions per feature m / ||W||_F^2, and the loss."""

    def __init__(self, run: ToyRun, ps: list[float], decays: list[float]):
        if len(run.p) != len(ps) * len(decays):
            raise ValueError(f"the run holds {len(run.p)} models; {len(ps)} probabilities x {len(decays)} decays "
                             f"= {len(ps) * len(decays)} expected (one model per pair, decay by decay)")
        self.run, self.ps, self.decays = run, list(ps), list(decays)
        self.norms = feature_norms(run.W)                      # (K, n), once
        self.dims = dimensions_per_feature(run.W)              # (K,)
        self.loss = run.losses[-1]                             # (K,)
        self.p = W.SelectionSlider(options=[(f"{p:g}", p) for p in self.ps], value=self.ps[0],
                                   description="p (active)", continuous_update=True, layout=W.Layout(width="24em"))
        self.decay = choice("decay", [(f"{d:g}", d) for d in self.decays], self.decays[0], width="3.5em")
        super().__init__([self.p, self.decay])

    def render(self):
        p, decay = self.p.value, self.decay.value
        k = self.decays.index(decay) * len(self.ps) + self.ps.index(p)
        norms = self.norms[k]
        kept = int((norms > 0.5).sum())
        n = len(norms)
        view = svg.row(
            directions(self.run.W[k], title=f"W's columns: p = {p:g}, decay {decay:g}"),
            svg.vbars([str(i) for i in range(n)], norms.tolist(), title="each feature's length ||W_i||",
                      ylabel="length", xlabel="feature i (importance decay^i)", width=260))
        text = (f"Features active with probability p = {p:g} (sparsity S = {1 - p:g}), importance of feature i = "
                f"{decay:g}^i: <b>{kept} of {n}</b> features kept (length above 0.5) in 2 dimensions, "
                f"{float(self.dims[k]):.2f} dimensions per feature; loss {float(self.loss[k]):.4f}.")
        state = {"p": f"{p:g}", "decay": f"{decay:g}", "kept": kept}   # as the controls show them ("1", not "1.0")
        return text, state, view
