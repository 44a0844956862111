"""Claims from live training hold for other seeds and other machines, not just the run a notebook was written with.

A notebook trains with seed 0 on the learner's CPU. Another CPU rounds the last bit differently and training
amplifies it, so what a learner's machine computes is, in effect, another sample of the same recipe. Here each
notebook that trains live (its manifest's ``[training] live``) runs again, itself, top to bottom, with another seed
(``GT_SEED``, which ``helpers.setup`` passes on to its training) under the settings of the machine running the
tests, and every cell must pass (the notebook's own asserts) and every claim it makes (``claim(...)``, recorded by
tools/margins.py) must hold. The two other machines' settings are run by tests/notebooks/test_determinism.py, on
seed 0, where a claim a run breaks fails its cell: together, three runs of each live notebook per CI run, one per
setting. The notebook is the recipe; nothing here repeats it.

This is the cheap guard. The thresholds themselves come from the full sweep (20 seeds x 3 settings, about 40
minutes: ``python -m tools.margins``), whose data helpers/margins.json is checked by tests/notebooks/test_margins.py.
Claims about the shipped checkpoints are not retrained here: tests/unit/model/test_checkpoints.py evaluates the files.
"""

from __future__ import annotations

import pytest


from tools import margins

pytestmark = [pytest.mark.slow, pytest.mark.apart]  # the live notebooks again under another seed, each a run

# One run: another seed under the test machine's own settings (on a CPU unlike the ones the margins were measured on,
# a sample they never saw). The tail is the full sweep's job (60 runs a notebook, docs/margins.md); the other two settings are
# test_determinism.py's runs. This pass catches a notebook or claim broken since the sweep.
RUNS = [(1, "this machine")]


@pytest.mark.parametrize("name", margins.LIVE)
@pytest.mark.parametrize("seed, setting", RUNS, ids=[f"seed{s}-{st.replace(' ', '-')}" for s, st in RUNS])
def test_the_notebook_holds_for_another_seed_and_machine(name, seed, setting):
    out = margins.run_once(name, seed, setting)
    assert out["claims"], f"{name}, seed {seed} ({setting}): no claim was recorded"
    assert not out["failed_cells"], (
        f"{name} fails with seed {seed} under {setting} ({margins.SETTINGS[setting]}): cells {out['failed_cells']} "
        "raised — an assert whose margin this run crossed? See docs/margins.md and tools/margins.py.")
    broken = [(words, c["value"], c["op"], c["bound"]) for words, c in out["claims"].items()
              if margins.holds(c["op"], c["bound"], c["value"]) is False]
    assert not broken, f"{name}, seed {seed} ({setting}): claims this run broke: {broken}"
