"""docs/margins.md, the measured margins of every live-training claim (tools/margins.py), is current and holds.

The full sweep is too long for CI (about 25 minutes on 2 cores); these checks are cheap:
- the table was measured with the notebooks' current recipe (the hash of their training and claim cells, of the
  helper functions that train, of the claims and the settings): a changed recipe without a new measurement fails;
- every threshold tools/margins.py reads is the notebook's own assert, word for word;
- every asserted claim keeps the headroom rule in every notebook, and no run of the sweep failed a cell;
- the tool's own arithmetic (the verdicts, what counts as a new recipe), on made-up values.
tests/notebooks/test_seeds.py runs the notebooks again with a few other seeds and machines.
"""

from __future__ import annotations

import json
import math

import nbformat
import pytest


from tools import margins
TABLE = margins.DOCS / "margins.json"


@pytest.fixture(scope="module")
def table() -> dict:
    """docs/margins.json with every verdict recomputed from its values by the tool's current rule."""
    assert TABLE.exists(), "docs/margins.json is missing: run `python -m tools.margins` (about 10 minutes)"
    return margins.load()


@pytest.mark.parametrize("name", list(margins.CLAIMS))
def test_the_table_was_measured_with_the_current_recipe(table, name):
    assert name in table, f"docs/margins.json has no {name}: run `python -m tools.margins {name[:2]}`"
    assert table[name]["recipe_hash"] == margins.recipe_hash(name), (
        f"{name}'s recipe (its training or claim cells, the helpers that train, a claim or a setting) changed since "
        f"docs/margins.md was measured: run `python -m tools.margins {name[:2]}` (about 10 minutes) and commit it")
    assert table[name]["runs"] >= 60 and len(table[name]["seeds"]) >= 20
    assert set(table[name]["settings"]) == set(margins.SETTINGS)


@pytest.mark.parametrize("name", list(margins.CLAIMS))
def test_every_threshold_is_the_notebooks_own_assert(name):
    nb = nbformat.read(margins.notebook_path(name), as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for claim in margins.CLAIMS[name]:
        if claim.op is not None:
            assert claim.assert_text, f"{name}: '{claim.label}' is asserted but names no assert"
        if claim.assert_text:
            assert claim.assert_text in code, f"{name} no longer asserts `{claim.assert_text}` ('{claim.label}')"


@pytest.mark.parametrize("name", list(margins.CLAIMS))
def test_every_claim_keeps_its_headroom_and_no_run_failed(table, name):
    measured = table[name]
    assert not measured["failed_runs"], f"{name}: cells failed in the sweep: {measured['failed_runs']}"
    bad = [(s["label"], s.get("verdict"), s.get("worst"), s.get("threshold"), s.get("sigmas"))
           for s in measured["claims"] if s["op"] is not None and s.get("verdict") != "OK"]
    assert not bad, f"{name}: claims without the headroom of docs/margins.md's rule: {bad}"
    assert [s["label"] for s in measured["claims"]] == [c.label for c in margins.CLAIMS[name]]


def same(a, b) -> bool:
    """Equal, floats to 1e-9 relative: statistics.pstdev's last bits differ between Python 3.10 and 3.13."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or a == b
    return a == b


def test_same_tells_a_last_bit_from_a_change():
    assert same({"sd": 0.1 + 0.2, "v": "OK"}, {"sd": 0.3, "v": "OK"})
    assert not same({"sd": 0.3, "v": "OK"}, {"sd": 0.3001, "v": "OK"})
    assert not same({"sd": 0.3, "v": "OK"}, {"sd": 0.3, "v": "TIGHT"})
    assert not same([1.0, 2.0], [1.0])


def test_the_stored_verdicts_are_the_rules(table):
    stored = json.loads(TABLE.read_text(encoding="utf-8"))
    assert same({n: r["claims"] for n, r in stored.items()}, {n: r["claims"] for n, r in table.items()}), \
        "docs/margins.json's summaries are not what the current rule gives: run `python -m tools.margins --rewrite`"


def test_the_markdown_table_is_the_json_one():
    stored = json.loads(TABLE.read_text(encoding="utf-8"))  # as stored: the line above checks it is the rule's
    assert (margins.DOCS / "margins.md").read_text(encoding="utf-8") == margins.markdown(stored), \
        "docs/margins.md was edited by hand or is out of step with docs/margins.json: run tools/margins.py"


def test_verdicts_on_made_up_values():
    above = margins.Claim("x", "x", ">", 1.0, "assert x > 1.0")
    assert margins.summarise(above, [2.0, 2.1, 1.9, 2.0])["verdict"] == "OK"          # 0.9 beyond, ~12 sd
    assert margins.summarise(above, [1.2, 2.0, 2.8, 2.0])["verdict"] == "TIGHT"       # beyond, but 1.7 sd
    assert margins.summarise(above, [0.9, 2.0, 2.0])["verdict"] == "FAILS"            # a run crossed it
    s = margins.summarise(above, [3.0, 3.0, None])
    assert s["verdict"] == "OK" and s["runs"] == 2 and s["headroom"] == 2.0           # no spread at all
    below = margins.Claim("y", "y", "<", 0.5, "assert y < 0.5")
    assert margins.summarise(below, [0.1, 0.2, 0.1, 0.15])["worst"] == 0.2
    flag = margins.Claim("z", "z", "==", True, "assert z")
    assert margins.summarise(flag, [True, True])["verdict"] == "OK"
    assert margins.summarise(flag, [True, False])["verdict"] == "FAILS"
    assert margins.summarise(margins.Claim("w", "w"), [True, False, True])["true"] == 2   # only measured
    assert margins.holds(below, None) is None and margins.holds(below, 0.6) is False
    # a skewed claim: its far tail (away from the threshold) does not count against it
    skewed = margins.summarise(margins.Claim("n", "n", ">", 5, "assert n > 5"), [10, 10.5, 11, 30, 50])
    assert skewed["verdict"] == "OK" and skewed["sd"] > 10 and skewed["sd_toward"] < 1


def test_a_comment_is_not_a_new_recipe_but_code_is():
    a = "x = train(model, seed=SEED)  # 300 steps\n\n"
    assert margins._code_without_comments(a) == margins._code_without_comments("x = train(model, seed=SEED)")
    assert margins._code_without_comments(a) != margins._code_without_comments("x = train(model, seed=1)")


def test_a_figure_or_an_import_is_not_a_new_recipe_but_a_claim_is():
    cell = ("from helpers.plots import lines\n"
            "results = compare_fact_models(task, seed=SEED)\n"
            "assert results['mlp'] >= 0.8\n"
            "ax = new_axes((6, 3))\n"
            "for name, r in results.items():\n"
            "    ax.plot(r['curve'], label=name)\n"
            "ax.set_xlabel('step'); ax.legend(fontsize=8);\n"
            "lines(None, {'a': ([0, 1], [1, 0])}, 'step', 'loss');\n")
    kept = margins._without_drawing(cell)
    assert kept == "results = compare_fact_models(task, seed=SEED)\nassert results['mlp'] >= 0.8"
    assert margins._without_drawing(cell.replace(">= 0.8", ">= 0.7")) != kept          # a threshold is the recipe
    mixed = "for r in rows:\n    ax.plot(r)\n    total += r\n"                       # a loop that also computes
    assert margins._without_drawing(mixed) == mixed.rstrip("\n")


def test_a_hash_is_re_recorded_only_where_the_measured_recipe_is_proved_the_same(table):
    """`--same-as REV` checks REV's stored hash with REV's own margins.py and compares recipe cells; a notebook
    whose recipe cell changed since REV is refused (here: a claim's assert edited in today's copy)."""
    name = "06_mlp"
    text = margins.notebook_path(name).read_text(encoding="utf-8")
    assert margins.recipe_cells(name, text) == margins.recipe_cells(name)
    changed = text.replace("assert with_mlp[\\\"accuracy\\\"] >= 0.8", "assert with_mlp[\\\"accuracy\\\"] >= 0.7")
    assert changed != text and margins.recipe_cells(name, changed) != margins.recipe_cells(name)
