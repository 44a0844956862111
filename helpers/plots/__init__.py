"""Figures for the notebooks; no widgets here.

Static figures are matplotlib: every function draws onto an ``Axes`` it is given (or a new one) and
returns it. The explorers (``helpers.widgets``) redraw on every key press, so they draw with
``svg.py`` (inline SVG strings) and the HTML views in ``attention.py`` instead.

basic.py      bars of top tokens, loss curves, a labelled heatmap
attention.py  weights over the context, score variance vs d_head, patterns (matplotlib and HTML)
ngrams.py     notebook 01: n-gram table growth and unseen rate
svg.py        bars, histograms and small heatmaps as SVG / HTML for the explorers
"""

from helpers.plots.basic import bars, heatmap, loss_curves, new_axes  # noqa: F401
