"""The live-training claims: one call each in the notebook, measured in helpers/margins.json, shown to the learner.

A notebook states a claim once, ``claim(words, value, op, bound)`` (helpers/plots/claims.py); tools/margins.py runs
the notebook over 20 seeds x 3 CPU settings and records what every call saw; the learner's run is shown among those
runs. The full sweep is too long for CI (about an hour on 2 cores); these checks are cheap:
- every claim a notebook makes is measured, with the notebook's current recipe (the hash of its training and claim
  cells, of the helper functions that train, and of the settings): a new claim or a changed recipe fails here, not in
  a learner's kernel;
- each claim keeps the headroom rule with the bound the notebook has *today* (a bound is not part of the measurement:
  it is checked against the stored values), and no run of the sweep failed a cell;
- the claim call itself: its check, its words, its record for the sweep, its bad input, its picture;
- the tool's own arithmetic (the verdicts, what counts as a new recipe), on made-up values.
tests/notebooks/test_seeds.py runs the notebooks again with a few other seeds and machines.
"""

from __future__ import annotations

import ast
import json
import math

import nbformat
import pytest

from helpers import claims as hc
from tools import margins


def notebook_claims(name: str) -> list[dict]:
    """Every ``claim(...)`` call in a notebook's code cells: its words, op and bound as written (literals)."""
    nb = nbformat.read(margins.notebook_path(name), as_version=4)
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "claim(" not in cell.source:
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "claim":
                args = {k.arg: k.value for k in node.keywords}
                pos = node.args
                words = pos[0] if pos else args.get("words")
                op = pos[2] if len(pos) > 2 else args.get("op")
                bound = pos[3] if len(pos) > 3 else args.get("bound")
                found.append({"cell": index, "words": _literal(words, name, index, "words"),
                              "op": _literal(op, name, index, "op") if op is not None else None,
                              "bound": _literal(bound, name, index, "bound") if bound is not None else None})
    return found


def _literal(node, name, index, what):
    """A literal (numbers may be written as arithmetic of numbers, 1 / 3): the test reads the bound without running."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    if not all(isinstance(n, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop, ast.Tuple, ast.Load))
               for n in ast.walk(node)):
        raise AssertionError(f"{name}, cell {index}: a claim's {what} must be written as a literal, got "
                             f"{ast.unparse(node)!r}")
    return eval(compile(ast.Expression(node), "<bound>", "eval"))  # numbers and + - * / only, checked above


@pytest.fixture(scope="module")
def data():
    assert margins.DATA.exists(), "helpers/margins.json is missing: run `python -m tools.margins` (about an hour)"
    return margins.load()


@pytest.mark.parametrize("name", margins.LIVE)
def test_the_margins_were_measured_with_todays_recipe(name, data):
    assert name in data, f"helpers/margins.json has no {name}: run `python -m tools.margins {name[:2]}`"
    assert data[name]["recipe_hash"] == margins.recipe_hash(name), (
        f"{name}'s recipe (training or claim cells, training helpers or settings) changed since "
        f"helpers/margins.json was measured: run `python -m tools.margins {name[:2]}` and commit it")
    assert data[name]["settings"] == list(margins.SETTINGS) and len(data[name]["seeds"]) >= 20
    assert data[name]["runs"] == len(data[name]["seeds"]) * len(data[name]["settings"])
    assert not data[name]["failed_runs"], (
        f"{name}: runs of the sweep in which a cell failed: {data[name]['failed_runs']}")


@pytest.mark.parametrize("name", margins.LIVE)
def test_every_claim_a_notebook_makes_was_measured_and_keeps_its_headroom(name, data):
    made = notebook_claims(name)
    assert made, f"{name} is a live-training notebook without a claim(...) call"
    stored = data[name]["claims"]
    missing = [c["words"] for c in made if c["words"] not in stored]
    assert not missing, (f"{name} makes claims that helpers/margins.json never measured (a learner would see 'no runs "
                         f"measured'): {missing}; run `python -m tools.margins {name[:2]}`")
    bad = []
    for c in made:
        values = stored[c["words"]]["values"]
        assert len(values) == data[name]["runs"]
        s = margins.summarise(c["words"], c["op"], c["bound"], values)
        if c["op"] is not None and s["verdict"] != "OK":
            bad.append((c["words"], c["op"], c["bound"], s["verdict"], s.get("worst"), s.get("sigmas")))
    assert not bad, f"{name}: claims without the headroom of the rule (bound beyond the worst run, >= 3 sd): {bad}"


def test_every_claims_words_name_one_claim_in_the_series():
    seen = {}
    for name in margins.LIVE:
        for c in notebook_claims(name):
            assert (c["words"] not in seen), f"'{c['words']}' is claimed twice: {seen.get(c['words'])} and {name}"
            seen[c["words"]] = name


def test_the_stored_data_holds_no_claim_that_no_notebook_makes(data):
    for name in margins.LIVE:
        made = {c["words"] for c in notebook_claims(name)}
        assert set(data[name]["claims"]) <= made, \
            f"{name}: helpers/margins.json holds claims no cell makes: {set(data[name]['claims']) - made}"


def test_docs_margins_md_is_written_from_the_data(data):
    assert (margins.DOCS / "margins.md").read_text(encoding="utf-8") == margins.markdown(data), \
        "docs/margins.md was edited by hand or is out of step with helpers/margins.json: run tools/margins.py --rewrite"


def test_the_margins_ship_with_the_helpers():
    """A regular install (Colab's) must find the data: it is package data of helpers."""
    from pathlib import Path

    from tools.cloud import tomllib

    project = tomllib.loads((Path(margins.ROOT) / "pyproject.toml").read_text(encoding="utf-8"))
    assert "margins.json" in project["tool"]["setuptools"]["package-data"]["helpers"]
    assert hc.DATA == margins.DATA


# --- the claim call -------------------------------------------------------------------------------------------------

@pytest.fixture
def measured_claims(tmp_path, monkeypatch):
    """helpers.claims reading a made-up margins file: one numeric claim, one yes/no claim, one only measured."""
    fake = {"99_demo": {"seeds": list(range(20)), "settings": ["a", "b", "c"], "runs": 60,
                        "claims": {"loss on the repeat": {"op": "<", "bound": 0.5,
                                                          "values": [0.04 + 0.0025 * i for i in range(60)]},
                                   "a head found": {"op": "==", "bound": True, "values": [True] * 60},
                                   "guess is u": {"op": None, "bound": None, "values": [True] * 57 + [False] * 3},
                                   "sometimes": {"op": ">", "bound": 0, "values": [None] * 10 + [1.0] * 50}}}}
    path = tmp_path / "margins.json"
    path.write_text(json.dumps(fake))
    monkeypatch.setattr(hc, "DATA", path)
    monkeypatch.delenv(hc.RECORD, raising=False)
    return path


def test_a_claim_shows_this_run_among_the_measured_runs(measured_claims):
    ev = hc.check("loss on the repeat", 0.121, "<", 0.5)
    text = ev.sentence()
    assert ev.ok is True and text.startswith("✓ holds")
    assert "this run 0.121" in text and "< 0.5" in text
    assert "Measured ahead: 0.04 to 0.188 over 60 runs (20 seeds × 3 CPU settings)" in text
    assert "within their range: 33 of them lower, 27 higher" in text   # 0.04 + 0.0025 i < 0.121 for i <= 32
    assert "below every one of them" in hc.evidence("loss on the repeat", 0.01, "<", 0.5).sentence()
    assert "above every one of them" in hc.evidence("loss on the repeat", 0.3, "<", 0.5).sentence()
    assert "yes in 60 of 60 runs" in hc.check("a head found", True, "==", True).sentence()
    only = hc.check("guess is u", False)
    assert only.ok is None and "this run no" in only.sentence() and "yes in 57 of 60" in only.sentence()
    part = hc.evidence("sometimes", 2.0, ">", 0).sentence()
    assert "over 50 runs" in part and "in 10 more it did not apply" in part
    tie = hc.evidence("loss on the repeat", 0.04 + 0.0025 * 4, "<", 0.5).sentence()
    assert "4 of them lower, 1 the same, 55 higher" in tie


def test_a_broken_claim_tells_the_learner_what_happened(measured_claims):
    with pytest.raises(hc.ClaimFailed) as e:
        hc.check("loss on the repeat", 0.7, "<", 0.5)
    message = str(e.value)
    assert "0.7" in message and "< 0.5" in message and "0.04 to 0.188" in message and "rerun" in message
    assert isinstance(e.value, AssertionError)   # nbval and a learner's Run All stop there, as at an assert
    with pytest.raises(hc.ClaimFailed):
        hc.check("a head found", False, "==", True)
    with pytest.raises(hc.ClaimFailed):           # never got there: math.inf, the notebooks' word for it
        hc.check("loss on the repeat", math.inf, "<", 0.5)


def test_an_unmeasured_claim_still_checks_its_bound_and_says_so(measured_claims):
    ev = hc.check("a new claim", 3.0, ">", 1)
    assert ev.ok is True and "no runs measured for this claim yet" in ev.sentence()
    with pytest.raises(hc.ClaimFailed):
        hc.check("a new claim", 0.5, ">", 1)


def test_while_recording_a_claim_appends_what_it_saw_and_never_raises(measured_claims, tmp_path, monkeypatch):
    record = tmp_path / "claims.jsonl"
    monkeypatch.setenv(hc.RECORD, str(record))
    import torch

    hc.check("loss on the repeat", torch.tensor(0.7), "<", 0.5)      # breaks the claim: recorded, not raised
    hc.check("share", 0.4, "between", (0.3, 0.65))
    hc.check("only measured", torch.tensor([3]))
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines[0] == {"words": "loss on the repeat", "value": pytest.approx(0.7), "op": "<", "bound": 0.5}
    assert lines[1]["bound"] == [0.3, 0.65] and lines[2] == {"words": "only measured", "value": 3.0, "op": None,
                                                              "bound": None}


@pytest.mark.parametrize("call, message", [
    (("", 1.0), "needs its words"),
    (("x", 1.0, "=<", 2), "op must be one of"),
    (("x", 1.0, "<"), "no bound"),
    (("x", 1.0, "between", (2, 1)), "(low, high) pair"),
    (("x", "1.0"), "must be a number"),
    (("x", [1.0, 2.0]), "must be a number"),
])
def test_a_claim_written_wrong_gets_a_plain_message(measured_claims, call, message):
    with pytest.raises((ValueError, TypeError), match=message.replace("(", r"\(").replace(")", r"\)")):
        hc.check(*call)


def test_a_claim_of_a_whole_tensor_is_refused(measured_claims):
    import torch

    with pytest.raises(TypeError, match=r"one number, got a tensor of shape \(3,\)"):
        hc.check("x", torch.ones(3))


def test_the_claims_picture_carries_its_words_and_every_run(measured_claims):
    from helpers.plots.claims import ClaimView

    ev = hc.evidence("loss on the repeat", 0.12, "<", 0.5)
    page = ClaimView(ev)._repr_html_()
    assert page.count("<circle") == 60                                  # every measured run, one dot each
    assert "<path" in page and "this run" in page                       # this run's diamond, labelled
    assert "stroke-dasharray" in page and "bound 0.5" in page           # the bound
    assert 'role="img"' in page and "0.04 to 0.188 over 60 runs" in page   # its text alternative
    assert repr(ClaimView(ev)) == ev.sentence()
    flag = ClaimView(hc.evidence("a head found", True, "==", True))._repr_html_()
    assert "<svg" not in flag and "yes in 60 of 60" in flag         # a yes/no claim: words alone
    unmeasured = ClaimView(hc.evidence("a new claim", 1.0, ">", 0))._repr_html_()
    assert "<svg" not in unmeasured and "no runs measured" in unmeasured


def test_the_notebook_call_shows_then_raises(measured_claims, capsys):
    from helpers.plots.claims import claim

    assert claim("loss on the repeat", 0.12, "<", 0.5) is None          # nothing for a cell to echo twice
    assert "✓ holds" in capsys.readouterr().out                          # (outside IPython: the plain words)
    with pytest.raises(hc.ClaimFailed):
        claim("loss on the repeat", 0.9, "<", 0.5)
    assert "✗ fails" in capsys.readouterr().out                          # shown before it stops the notebook


# --- the tool's arithmetic --------------------------------------------------------------------------------------

def test_the_headroom_rule():
    assert margins.summarise("x", ">", 1.0, [2.0, 2.1, 1.9, 2.0])["verdict"] == "OK"          # 0.9 beyond, ~12 sd
    assert margins.summarise("x", ">", 1.0, [1.2, 2.0, 2.8, 2.0])["verdict"] == "TIGHT"       # beyond, but 1.7 sd
    assert margins.summarise("x", ">", 1.0, [0.9, 2.0, 2.0])["verdict"] == "FAILS"            # a run crossed it
    s = margins.summarise("x", ">", 1.0, [3.0, 3.0, None])
    assert s["runs"] == 2 and s["verdict"] == "OK"
    assert margins.summarise("y", "<", 0.5, [0.1, 0.2, 0.1, 0.15])["worst"] == 0.2
    assert margins.summarise("z", "==", True, [True, True])["verdict"] == "OK"
    assert margins.summarise("z", "==", True, [True, False])["verdict"] == "FAILS"
    assert margins.summarise("w", None, None, [True, False, True])["true"] == 2   # only measured
    skewed = margins.summarise("n", ">", 5, [10, 10.5, 11, 30, 50])
    assert skewed["verdict"] == "OK" and skewed["sd"] > 10
    both = [0.45 + 0.001 * i for i in range(20)]
    assert margins.summarise("b", "between", [0.3, 0.65], both)["verdict"] == "OK"
    assert margins.summarise("b", "between", [0.3, 0.46], both)["verdict"] == "FAILS"      # the upper side crossed
    assert margins.summarise("b", "between", [0.448, 0.65], both)["verdict"] == "TIGHT"     # the lower side close
    assert margins.summarise("i", "<=", 1000, [200, 250, math.inf])["verdict"] == "FAILS"  # a run that never got there


def test_a_comment_is_not_a_new_recipe_but_code_is():
    a = "x = train(model, seed=SEED)  # 300 steps\n\n"
    assert margins._code_without_comments(a) == margins._code_without_comments("x = train(model, seed=SEED)")
    assert margins._code_without_comments(a) != margins._code_without_comments("x = train(model, seed=1)")


def test_a_docstring_is_not_a_new_recipe_but_a_string_that_computes_is():
    """The recipe functions' docstrings (their own and their methods') are cut before hashing, like comments; a string
    the code uses is kept."""
    def source(doc: str, mode: str) -> str:
        return (f'def train(model, steps=300):\n    """{doc}"""\n    class Run:\n        """{doc}"""\n'
                f'        kind = "{mode}"\n    return Run\n')

    same = margins._without_docstrings(source("300 steps, about half of the runs", "fast"))
    assert same == margins._without_docstrings(source("300 steps", "fast")) and "about half" not in same
    assert same != margins._without_docstrings(source("300 steps", "slow"))   # kind = "..." computes: kept


def test_a_figure_an_import_or_a_bound_is_not_a_new_recipe_but_a_claims_value_is():
    cell = ("from helpers.plots import lines\n"
            "results = compare_fact_models(task, seed=SEED)\n"
            "claim('facts right', results['mlp'], '>=', 0.8, fmt='.0%')\n"
            "ax = new_axes((6, 3))\n"
            "for name, r in results.items():\n"
            "    ax.plot(r['curve'], label=name)\n"
            "ax.set_xlabel('step'); ax.legend(fontsize=8);\n"
            "lines(None, {'a': ([0, 1], [1, 0])}, 'step', 'loss');\n")

    def recipe(source):
        return margins._code_without_comments(margins._claims_without_bounds(margins._without_drawing(source)))

    kept = recipe(cell)
    assert kept == "results = compare_fact_models(task, seed=SEED)\nclaim('facts right', results['mlp'])"
    assert recipe(cell.replace(">=', 0.8", ">=', 0.7")) == kept                      # a bound is checked, not measured
    assert recipe(cell.replace("results['mlp'],", "results['wide'],")) != kept       # a value is measured
    mixed = "for r in rows:\n    ax.plot(r)\n    total += r\n"                        # a loop that also computes
    assert margins._without_drawing(mixed) == mixed.rstrip("\n")


def test_the_recipe_is_cut_in_the_text_so_every_python_hashes_it_alike():
    """ast.unparse and tokenize.untokenize spell code differently on 3.10-3.13 (CI's other Pythons once disagreed on
    the hash of an unchanged notebook); the cut keeps the text as written, non-ASCII words and line breaks included."""
    cell = ('claim("ratio — d_model = 1 over 64", kls[0] / kls[-1],   # ü\n'
            '      ">", 20, fmt=".0f")\n'
            'x = f"{a!r:>{w}}"  # a comment\n')
    assert margins._code_without_comments(margins._claims_without_bounds(cell)) == \
        'claim("ratio — d_model = 1 over 64", kls[0] / kls[-1])\nx = f"{a!r:>{w}}"'
