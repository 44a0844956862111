"""The maintainers' tools, one module each; run them from the repository's root as ``python -m tools.NAME``
(``bash run.sh`` runs the ones a learner or an instructor needs).

notebooks      keep the notebooks clean, refresh their checked outputs, learner copies, an nbgrader course
clean          what a committed notebook holds (used by notebooks and cloud)
cloud          the Colab cell, the Binder and Colab links, binder/requirements.txt
series         the tables of notebooks in README.md and docs/notebooks.md, from the manifests (helpers/series/)
learner_time   the time estimate in each notebook's opening and the README
idioms         the PyTorch idioms a learner meets, read off the learner copies
site           the course site (``bash run.sh site``)
margins        live-training claims measured over seeds and machine settings (helpers/margins.json, docs/margins.md)
train_models   the shipped checkpoints, trained again
bench          run time, memory and widget latency (``bash run.sh bench``; docs/speed.md)
a11y           axe-core over every notebook's outputs (``bash run.sh a11y``; docs/accessibility.md)
hub            a local JupyterHub for a class (``bash run.sh hub``)
busy           a command run beside CPU-bound processes (docs/check_limit.md)
jlab           the browser driver the browser tests and the bench share
"""
