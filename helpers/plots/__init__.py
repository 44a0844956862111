"""Figures for the notebooks; no widgets here.

Static figures are matplotlib: every function draws onto an ``Axes`` it is given (or a new one) and
returns it. The explorers (``helpers.widgets``) redraw on every key press, so they draw with
``svg.py`` (inline SVG strings) and the HTML views in ``attention.py`` instead.

basic.py      bars of top tokens, loss curves, a labelled heatmap
attention.py  weights over the context, score variance vs d_head, patterns (matplotlib and HTML)
ngrams.py     notebook 01: n-gram table growth and unseen rate
svg.py        bars, histograms and small heatmaps as SVG / HTML for the explorers
alt.py        every picture's data in words: its text alternative

Importing this package in a notebook registers ``alt.figure_html`` as the HTML form of a matplotlib figure, so
every static figure is shown with its text alternative.
"""

from helpers.plots.alt import register_figure_html
from helpers.plots.basic import bars, heatmap, lines, loss_curves, new_axes  # noqa: F401

register_figure_html()
