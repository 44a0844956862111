"""Margins of the notebooks' live-training claims, measured over many seeds and other machines.

    .venv/bin/python -m tools.margins                     # every notebook that trains live: 20 seeds x 3 settings
    .venv/bin/python -m tools.margins 09 --seeds 40       # one notebook, more seeds
    .venv/bin/python -m tools.margins --jobs 2            # two notebooks' kernels at a time (default: the cores)

A notebook that trains a model (02, 06, 09) asserts numbers that come from that training. A learner's CPU rounds
the last bit differently from the one the notebook was written on, and training amplifies it, so every learner's
run is, in effect, another sample of the recipe: a threshold is only safe if it lies beyond what every seed and
every CPU can give. This tool runs each notebook itself, top to bottom on a fresh kernel, once per seed
(``GT_SEED``, which ``helpers.setup`` passes on to the notebook's training) under each of ``SETTINGS`` — this
machine's own and two "other machines" (tests/notebooks/test_determinism.py's perturbations) — and reads every claim of
``CLAIMS`` out of the kernel afterwards. The notebook is the recipe: there is no second copy of it here.

It writes docs/margins.md (a table: claim, threshold, min / median / max / standard deviation, headroom) and
docs/margins.json (every value, and the recipe hash each notebook was measured with). tests/notebooks/test_margins.py
checks, cheaply, that the table is current (the recipe hash: the notebook's training and claim cells and the helper
functions that train), that every threshold here is the notebook's own assert, and that each claim keeps the
headroom below; the full sweep (about 25 minutes on 2 cores) runs only from here.

Headroom, the rule: a claim is OK when its threshold lies beyond the worst value of every run, and at least
``MIN_SIGMAS`` standard deviations from the median, the deviation measured on the threshold's side only (the
root-mean-square distance from the median of the runs on that side: a skewed claim's far tail says nothing about
crossing). Under a normal approximation that is a crossing rate under 1 in 700 runs: well under 1 in 200, a
class of 200 laptops. A boolean claim (a guess, a head found) is OK when it
held in every run. A claim that cannot meet the rule must change (a comparison, a range in the prose), not the
seed count.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import io
import json
import math
import os
import statistics
import sys
import time
import tokenize
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MIN_SIGMAS = 3.0

# This machine's settings, and two other machines (as far as one machine can pretend: torch's CPU kernels on another
# instruction set, MKL on another code path, another thread count). Each gives a different training trajectory from
# the same seed on this kind of machine (checked by tests/notebooks/test_determinism.py's negative control).
SETTINGS: dict[str, dict[str, str]] = {
    "this machine": {"GT_THREADS": "1"},
    "other machine A": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41",
                        "GT_THREADS": "2"},
    "other machine B": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "GT_THREADS": "1"},
}
PERTURBED = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA")  # removed from the environment first


@dataclass(frozen=True)
class Claim:
    """One live-training claim: ``value`` is a Python expression evaluated in the notebook's kernel after the run;
    the notebook asserts ``value op threshold`` (``assert_text`` is that assert, as the notebook writes it).
    op None: not asserted, only measured (a range the prose quotes)."""

    label: str
    value: str
    op: str | None = None
    threshold: float | bool | None = None
    assert_text: str | None = None


# notebook 09 asserts how the induction heads compose with the previous-token head
COMPOSITION = [
    Claim("K minus max(Q, V) composition, clearest previous-token head",
          "min(float(K[prev, h2]) - max(float(Q[prev, h2]), float(V[prev, h2])) for h2 in induction_heads)",
          ">", 0, "assert float(K[prev, h2]) > max(float(Q[prev, h2]), float(V[prev, h2]))"),
    Claim("weakest previous-token K minus the other head's strongest",
          "strongest_K - max(float(K[h, h2]) for h in other_heads for h2 in induction_heads) if other_heads else None",
          ">", 0, "assert not other_heads or strongest_K > max(float(K[h, h2]) for h in other_heads for h2 in "
          "induction_heads)"),
]
_SETS = "[fact_neurons(mlp_model, prompts[i], int(answers[i])) for i in range(len(answers)) if right[i]]"

CLAIMS: dict[str, list[Claim]] = {
    "02_zero_layer": [
        Claim("share of the unigram -> bigram gap closed", "gap_closed", ">", 0.8, "assert gap_closed > 0.8"),
        Claim("held-out loss minus the unigram's", "ce_zero - ce_unigram", "<", 0, "assert ce_zero < ce_unigram"),
        Claim("KL(zero-layer) / KL(unigram)", "kl_model / kl_unigram", "<", 1 / 3,
              "assert 0 < kl_model < kl_unigram / 3"),
        Claim("d_model sweep: smallest ratio of one KL to the next", "min(a / b for a, b in zip(kls, kls[1:]))",
              ">", 1, "assert all(a > b for a, b in zip(kls, kls[1:]))"),
        Claim("d_model sweep: KL at 1 / KL at 64", "kls[0] / kls[-1]", ">", 20, "assert kls[0] > 20 * kls[-1]"),
    ],
    "06_mlp": [
        Claim("attention + MLP: facts right", 'with_mlp["accuracy"]', ">=", 0.8,
              'assert with_mlp["accuracy"] >= 0.8'),
        Claim("attention + MLP minus the better attention-only model",
              'with_mlp["accuracy"] - max(without["accuracy"], wide["accuracy"])', ">", 0,
              'assert with_mlp["accuracy"] > max(without["accuracy"], wide["accuracy"])'),
        Claim("attention only: facts right", 'without["accuracy"]', "<=", 0.92,
              'assert without["accuracy"] <= 0.92 and wide["accuracy"] <= 0.92'),
        Claim("attention only, wide: facts right", 'wide["accuracy"]', "<=", 0.92,
              'assert without["accuracy"] <= 0.92 and wide["accuracy"] <= 0.92'),
        Claim("attention only: loss minus the best constant's", 'without["loss"] - task.best_constant_loss()', "<", 0,
              'assert without["loss"] < task.best_constant_loss() and wide["loss"] < task.best_constant_loss()'),
        Claim("wide: loss minus the best constant's", 'wide["loss"] - task.best_constant_loss()', "<", 0,
              'assert without["loss"] < task.best_constant_loss() and wide["loss"] < task.best_constant_loss()'),
        Claim("attention only (both): lowest loss of steps 230-299 minus lowest of steps 0-150",
              'max(min(r["curve"][-8:]) - min(r["curve"][:16]) for r in (without, wide))', "<", 0,
              'assert all(min(r["curve"][-8:]) < min(r["curve"][:16]) for r in (without, wide))'),
        Claim("share of (prompt, neuron) pairs with z > 0: above", "fraction", ">", 0.3,
              "assert 0.3 < fraction < 0.65"),
        Claim("share of (prompt, neuron) pairs with z > 0: below", "fraction", "<", 0.65,
              "assert 0.3 < fraction < 0.65"),
        Claim("median prompts a neuron fires on", "int(fires_on.median())", ">", 64,
              "assert int(fires_on.median()) > task.n_facts // 4"),
        Claim("facts surviving their strongest neuron's ablation: above", "kept", ">", 0.35,
              "assert 0.35 < kept < 0.85"),
        Claim("facts surviving their strongest neuron's ablation: below", "kept", "<", 0.85,
              "assert 0.35 < kept < 0.85"),
        Claim("facts broken by the most needed neuron", "broken_by[worst]", ">=", 10,
              "assert broken_by[worst] >= 10"),
        Claim("prompts the explorer's opening neuron fires on", 'explorer.last_state["fires_on"]'),
        # exercise 6.2's open part, answered in its fold: fact_neurons (the solution) on every fact the model knows
        Claim("exercise 6.2: median neurons a known fact needs",
              f"(lambda s: sorted(map(len, s))[len(s) // 2])({_SETS})"),
        Claim("exercise 6.2: most neurons a known fact needs", f"max(map(len, {_SETS}))"),
        Claim("exercise 6.2: share of known facts one neuron flips",
              f"(lambda s: sum(len(x) == 1 for x in s) / len(s))({_SETS})"),
        Claim("exercise 6.2: share of known facts whose strongest-firing neuron is in the set",
              "(lambda k: sum(int(strongest[i]) in fact_neurons(mlp_model, prompts[i], int(answers[i])) for i in k)"
              " / len(k))([i for i in range(len(answers)) if right[i]])"),
    ],
    "09_induction_heads": [
        Claim("first half: probability on characters already seen minus a uniform guess's",
              "float(on_seen.mean() - uniform.mean())", ">", 0,
              "assert on_seen.mean() > uniform.mean() and right.mean() < 1 / 64"),
        Claim("first half: probability of the right character, times 64", "float(right.mean()) * 64", "<", 1,
              "assert on_seen.mean() > uniform.mean() and right.mean() < 1 / 64"),
        Claim("step the induction score passed 0.85", "run.formed_at if run.formed_at is not None else 10**9", "<=",
              1000, "assert run.formed_at is not None and run.formed_at <= 1000"),
        Claim("step it copied from every position (p(B) > 0.5, k >= 1)",
              "run.everywhere_at if run.everywhere_at is not None else 10**9", "<=", 1400,
              "assert run.everywhere_at is not None and run.everywhere_at <= 1400"),
        Claim("training steps in all", "run.step[-1]"),
        Claim("training seconds", "run.seconds"),
        Claim("training loss, first 100 steps", "early", ">", 3.8, "assert early > 3.8 and late < early - 1.5"),
        Claim("training loss drop (first 100 minus last 20 steps)", "early - late", ">", 1.5,
              "assert early > 3.8 and late < early - 1.5"),
        Claim("probe: loss on the first half", "first", ">", 3.5, "assert first > 3.5 and repeat < 0.5"),
        Claim("probe: loss on the repeat", "repeat", "<", 0.5, "assert first > 3.5 and repeat < 0.5"),
        Claim("a previous-token head and an induction head found", "bool(previous_heads and induction_heads)",
              "==", True, "assert previous_heads and induction_heads"),
        Claim("both layer-1 heads are induction heads", "len(induction_heads) == 2"),
        Claim("both layer-0 heads are previous-token heads", "len(previous_heads) == 2"),
        Claim("repeat loss, previous-token head(s) off", "values[1]", ">", 2.5, "assert values[1] > 2.5"),
        Claim("repeat loss, other layer-0 head off", "values[2] if other_heads else None", "<", 0.8,
              "assert not other_heads or values[2] < 0.8"),
        Claim("one induction head off, minus intact", "values[3] - values[0]"),
        Claim("both layer-1 heads off, minus one", "values[4] - values[3]", ">", 0, "assert values[3] < values[4]"),
        Claim("repeat loss, both layer-1 heads off", "values[4]", ">", 2.5, "assert values[4] > 2.5"),
        *COMPOSITION,
        Claim("repeat loss, previous-token head(s) out of layer 1's keys only", "by_path[\"layer 1's keys\"]", ">", 2.5,
              "assert by_path[\"layer 1's keys\"] > 2.5"),
        Claim("queries, values, direct path (alone or all three): most above intact",
              "max(by_path[p] for p in list(by_path)[1:]) - values[0]", "<", 0.2,
              "assert max(by_path[p] for p in list(by_path)[1:]) < values[0] + 0.2"),
        Claim("all three but the keys at once, minus intact", "by_path['queries, values and direct path'] - values[0]"),
        Claim("segment of 20: loss on the repeat", "on_repeat", "<", 1.5, "assert on_repeat < 1.5"),
        Claim("copying by position: lowest p(B), k = 1-29", "float(by_k[1:].min())", ">", 0.25,
              "assert float(by_k[1:].min()) > 0.25"),
        Claim("copying by position: p(B) at k = 0", "float(by_k[0])"),
        Claim("copying by position: mean p(B), k = 0-29", "float(by_k.mean())"),
        Claim("one layer: loss on the repeat", "repeat_1", ">", 2.0, "assert repeat_1 > 2.0 and repeat_1 > 4 * repeat"),
        Claim("one layer / two layers, loss on the repeat", "repeat_1 / repeat", ">", 4,
              "assert repeat_1 > 2.0 and repeat_1 > 4 * repeat"),
        Claim("explorer's guess after 'Mr and Mrs D' is 'u'", "guess == 'u'"),
    ],
}

# The helper functions whose code is part of each notebook's recipe (their source goes into the recipe hash).
RECIPE_FUNCTIONS = {
    "02_zero_layer": ["helpers.train.fresh_model", "helpers.train.train", "helpers.train.fit_to_counts",
                      "helpers.train.evaluate", "helpers.optim.AdamW", "helpers.tokens.random_windows"],
    "06_mlp": ["helpers.train.fresh_model", "helpers.facts.compare_fact_models", "helpers.facts.train_facts",
               "helpers.facts.FactsTask", "helpers.optim.AdamW"],
    "09_induction_heads": ["helpers.train.fresh_model", "helpers.induction.config", "helpers.induction.train_induction",
                           "helpers.induction.copy_batch", "helpers.induction.copy_loss",
                           "helpers.induction.probe_tokens", "helpers.induction.copy_by_position",
                           "helpers.induction.pair_at", "helpers.optim.AdamW"],
}
TRAINS = ("fresh_model(", "train(", "train_induction(", "fit_to_counts(", "compare_fact_models(")


def notebook_path(name: str) -> Path:
    return ROOT / "notebooks" / f"{name}.ipynb"


def _code_without_comments(source: str) -> str:
    """A cell's code with comments and blank lines removed (editing a comment is not a new recipe)."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.COMMENT]
        source = tokenize.untokenize(tokens)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return "\n".join(line.rstrip() for line in source.splitlines() if line.strip())


# Drawing a figure, or importing one more name, changes no measured number: those statements are left out of a
# recipe cell (the helpers that draw, and matplotlib's own calls on an Axes or a figure).
DRAWS = {"lines", "loss_curves", "heatmap", "bars", "phase_change", "rung_dots", "curves", "activations",
         "weight_bars", "score_variance", "score_heatmap", "heads_side_by_side", "ngram_growth", "new_axes",
         "show_map", "display"}
AXES = {"ax", "ax1", "ax2", "plt", "fig", "right"}


def _draws(statement) -> bool:
    import ast

    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(statement, ast.For):
        return all(_draws(s) for s in statement.body)
    value = statement.value if isinstance(statement, (ast.Expr, ast.Assign)) else None
    while isinstance(value, ast.Tuple) and value.elts:
        value = value.elts[0]
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name):
        return func.id in DRAWS
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and (func.id in AXES or func.id == "attn_plots")


def _without_drawing(source: str) -> str:
    """A cell's source without its import statements and its top-level drawing statements."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    drop = {line for s in tree.body if _draws(s) for line in range(s.lineno, s.end_lineno + 1)}
    return "\n".join(line for i, line in enumerate(source.splitlines(), 1) if i not in drop)


def recipe_cells(name: str, notebook: str | None = None) -> list[str]:
    """The code cells that make up a notebook's recipe: the set-up cell, every cell that builds or trains a model,
    and every cell holding one of its claims' asserts; without their drawing and import statements. ``notebook``:
    the notebook's text (default: the file as it is now)."""
    import nbformat

    nb = nbformat.reads(notebook, as_version=4) if notebook is not None else \
        nbformat.read(notebook_path(name), as_version=4)
    asserts = {c.assert_text for c in CLAIMS[name] if c.assert_text}
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if "helpers.setup(" in cell.source or any(t in cell.source for t in TRAINS) or \
                any(a in cell.source for a in asserts):
            cells.append(_code_without_comments(_without_drawing(cell.source)))
    return cells


def recipe_hash(name: str, notebook: str | None = None) -> str:
    """What a notebook's live claims depend on: its recipe cells, the helper functions that train, the claims
    (expressions and thresholds) and the settings. A change to any of them needs a new measurement."""
    import importlib

    h = hashlib.sha256()
    for source in recipe_cells(name, notebook):
        h.update(source.encode())
    for dotted in RECIPE_FUNCTIONS[name]:
        module, attr = dotted.rsplit(".", 1)
        h.update(_code_without_comments(inspect.getsource(getattr(importlib.import_module(module), attr))).encode())
    h.update(json.dumps([asdict(c) for c in CLAIMS[name]]).encode())
    h.update(json.dumps(SETTINGS, sort_keys=True).encode())
    return h.hexdigest()[:16]


def settings_env(setting: str, seed: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PERTURBED}
    env.update(SETTINGS[setting])
    env.update({"GT_SEED": str(seed), "MPLBACKEND": "Agg"})
    return env


_READ = """
import json as _json
def _gt_value(_expr):
    try:
        _v = eval(_expr)
    except Exception as _e:
        return {"error": f"{type(_e).__name__}: {_e}"}
    if _v is None:
        return {"value": None}
    if isinstance(_v, bool):
        return {"value": _v}
    return {"value": float(_v)}
print("GT_CLAIMS " + _json.dumps({_label: _gt_value(_expr) for _label, _expr in %s}))
"""


def run_once(name: str, seed: int, setting: str, timeout: int = 900) -> dict:
    """Execute the notebook with ``GT_SEED=seed`` under ``setting`` (errors allowed: a failing assert is recorded,
    not fatal) and read every claim's value. Returns {"values": {label: value}, "failed_cells": [...], "seconds"}."""
    import asyncio

    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(notebook_path(name), as_version=4)
    pairs = [(c.label, c.value) for c in CLAIMS[name]]
    nb.cells.append(nbformat.v4.new_code_cell(_READ % repr(pairs)))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(ROOT / "notebooks")}})
    start = time.perf_counter()
    with ThreadPoolExecutor(1) as pool:  # (its own event loop, whatever runs in this thread)
        pool.submit(asyncio.run, client.async_execute(env=settings_env(setting, seed))).result()
    failed = [i for i, cell in enumerate(nb.cells[:-1]) if cell.cell_type == "code"
              and any(o.output_type == "error" for o in cell.get("outputs", []))]
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    line = next((ln for ln in text.splitlines() if ln.startswith("GT_CLAIMS ")), None)
    if line is None:
        raise RuntimeError(f"{name} seed {seed} ({setting}): the claims could not be read: {nb.cells[-1].outputs}")
    raw = json.loads(line[len("GT_CLAIMS "):])
    return {"values": {k: v.get("value") for k, v in raw.items()},
            "errors": {k: v["error"] for k, v in raw.items() if "error" in v},
            "failed_cells": failed, "seconds": round(time.perf_counter() - start, 1)}


def holds(claim: Claim, value) -> bool | None:
    if claim.op is None or value is None:
        return None
    return {"<": value < claim.threshold, "<=": value <= claim.threshold, ">": value > claim.threshold,
            ">=": value >= claim.threshold, "==": value == claim.threshold}[claim.op]


def summarise(claim: Claim, values: list) -> dict:
    """min / median / max / sd of a claim's values over every run, and its verdict under the headroom rule."""
    seen = [v for v in values if v is not None]
    out = {"label": claim.label, "op": claim.op, "threshold": claim.threshold, "runs": len(seen)}
    if not seen:
        return out | {"verdict": "no value"}
    if isinstance(seen[0], bool) or claim.op == "==":
        true = sum(bool(v) for v in seen)
        verdict = None if claim.op is None else ("OK" if true == len(seen) else "FAILS")
        return out | {"true": true, "verdict": verdict}
    lo, mid, hi = min(seen), statistics.median(seen), max(seen)
    sd = statistics.pstdev(seen)
    out |= {"min": lo, "median": mid, "max": hi, "sd": sd}
    if claim.op is None:
        return out | {"verdict": None}
    upper = claim.op in ("<", "<=")  # the threshold is above the values
    worst = hi if upper else lo
    margin = (claim.threshold - worst) if upper else (worst - claim.threshold)
    # the spread on the threshold's side only (a semi-deviation about the median): a skewed claim's far tail, away
    # from the threshold, says nothing about how often a run crosses it
    side = [v - mid for v in seen if (v > mid if upper else v < mid)]
    semi = math.sqrt(sum(d * d for d in side) / len(side)) if side else 0.0
    out["sd_toward"] = semi
    sigmas = abs(claim.threshold - mid) / semi if semi > 0 else math.inf
    beyond = all(holds(claim, v) for v in seen)
    out |= {"worst": worst, "headroom": margin, "sigmas": sigmas}
    return out | {"verdict": "OK" if beyond and sigmas >= MIN_SIGMAS else ("TIGHT" if beyond else "FAILS")}


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def write_table(results: dict) -> None:
    """docs/margins.md from docs/margins.json's results."""
    (DOCS / "margins.md").write_text(markdown(results), encoding="utf-8")


def markdown(results: dict) -> str:
    """The text of docs/margins.md for these results."""
    lines = ["# Margins of the live-training claims", "",
             "Written by `python -m tools.margins` (its docstring says how and why); do not edit by hand. Each",
             "notebook that trains a model ran top to bottom once per seed under each setting; every claim it asserts",
             "(and a few it only quotes) was read from the kernel. **Headroom rule:** the threshold lies beyond the",
             f"worst value seen and at least {MIN_SIGMAS:g} standard deviations from the median (OK), the deviation",
             "taken on the threshold's side of the median only (σ toward); beyond the worst but closer (TIGHT);",
             "crossed by some run (FAILS). A yes/no claim is OK when it held in every run.",
             "Settings: " + "; ".join(f"{k}: " + ", ".join(f"`{a}={b}`" for a, b in v.items())
                                     for k, v in SETTINGS.items()) + ".", ""]
    for name, r in results.items():
        lines += [f"## {name}", "",
                  f"{r['runs']} runs: seeds {r['seeds'][0]}-{r['seeds'][-1]} under {', '.join(r['settings'])}; "
                  f"measured {r['date']} on {r['machine']}; recipe hash `{r['recipe_hash']}`; "
                  f"{r['seconds_per_run']:.0f} s per run.", ""]
        if r["failed_runs"]:
            lines += ["Runs in which a cell failed: " + "; ".join(
                f"seed {f['seed']} ({f['setting']}): cells {f['cells']}" for f in r["failed_runs"]), ""]
        lines += ["| claim | asserted | min | median | max | sd | headroom (σ toward, from median) | verdict |",
                  "|---|---|---|---|---|---|---|---|"]
        for s in r["claims"]:
            s = s | {"label": s["label"].replace("|", "\\|")}  # (a bar inside a table cell must be escaped)
            asserted = "" if s["op"] is None else f"{s['op']} {_fmt(s['threshold'])}"
            if "true" in s:
                lines.append(f"| {s['label']} | {asserted} | | {s['true']} of {s['runs']} runs | | | | "
                             f"{s['verdict'] or 'measured'} |")
            elif "min" in s:
                room = "" if s["op"] is None else f"{_fmt(s['headroom'])} ({_fmt(s['sigmas'])} σ)"
                lines.append(f"| {s['label']} | {asserted} | {_fmt(s['min'])} | {_fmt(s['median'])} | "
                             f"{_fmt(s['max'])} | {_fmt(s['sd'])} | {room} | {s['verdict'] or 'measured'} |")
            else:
                lines.append(f"| {s['label']} | {asserted} | | | | | | {s['verdict']} |")
        lines.append("")
    return "\n".join(lines)


def load() -> dict:
    """docs/margins.json, its summaries recomputed from the stored values with the current rule."""
    path = DOCS / "margins.json"
    results = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    for name, r in results.items():
        if name in CLAIMS:
            r["claims"] = [summarise(c, [v for *_, v in r["values"].get(c.label, [])]) for c in CLAIMS[name]]
    return results


def measure(name: str, seeds: list[int], settings: list[str], jobs: int) -> dict:
    measured_with = recipe_hash(name)  # before the runs: an edit made while they run is not what they measured
    done: list[tuple[int, str, dict]] = []
    total = len(seeds) * len(settings)
    for setting in settings:
        # no more threads than cores: kernels whose OpenMP threads outnumber the cores spin and run many times slower
        threads = int(SETTINGS[setting].get("GT_THREADS", "1"))
        at_once = max(1, min(jobs, (os.cpu_count() or 1) // threads))
        with ThreadPoolExecutor(at_once) as pool:
            futures = {pool.submit(run_once, name, seed, setting): seed for seed in seeds}
            for future, seed in futures.items():
                out = future.result()
                done.append((seed, setting, out))
                bad = f", failed cells {out['failed_cells']}" if out["failed_cells"] else ""
                print(f"  {name} seed {seed:2d} ({setting}): {out['seconds']:.0f} s{bad}  [{len(done)}/{total}]",
                      flush=True)
    values = {c.label: [out["values"].get(c.label) for _, _, out in done] for c in CLAIMS[name]}
    import platform

    import torch

    return {"recipe_hash": measured_with, "seeds": seeds, "settings": settings, "runs": len(done),
            "date": time.strftime("%Y-%m-%d"),
            "machine": f"{platform.processor() or platform.machine()}, torch {torch.__version__} "
                       f"({torch.backends.cpu.get_cpu_capability()})",
            "seconds_per_run": statistics.mean(out["seconds"] for *_, out in done),
            "failed_runs": [{"seed": s, "setting": st, "cells": out["failed_cells"]} for s, st, out in done
                            if out["failed_cells"]],
            "claims": [summarise(c, values[c.label]) for c in CLAIMS[name]],
            "values": {label: [[s, st, v] for (s, st, _), v in zip(done, vs)] for label, vs in values.items()}}


def _save(results: dict) -> None:
    ordered = {n: results[n] for n in CLAIMS if n in results}
    (DOCS / "margins.json").write_text(json.dumps(ordered, indent=1), encoding="utf-8")
    write_table(ordered)


def _git(*args: str) -> str:
    import subprocess

    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def _same_as(rev: str, names: list[str], results: dict) -> int:
    """Re-record recipe hashes without runs, only where it is proved that nothing measured changed since ``rev``: the
    hash stored for the notebook is what ``rev``'s own margins.py computes for ``rev``'s notebook (so ``rev`` is a
    state that was measured), the training helpers' files are unchanged since ``rev``, and ``rev``'s recipe cells,
    with this margins.py's rule, equal today's. ``rev``'s claims and settings must equal today's too."""
    import importlib.util
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        old_path = Path(tmp) / "margins_at_rev.py"
        old_path.write_text(_git("show", f"{rev}:tools/margins.py"))
        spec = importlib.util.spec_from_file_location("margins_at_rev", old_path)
        old = importlib.util.module_from_spec(spec)
        sys.modules["margins_at_rev"] = old
        spec.loader.exec_module(old)
    code = 0
    for name in names:
        text = _git("show", f"{rev}:notebooks/{name}.ipynb")
        old.notebook_path = lambda n, t=text: _text_file(t)   # rev's rule on rev's notebook
        files = sorted({"helpers/" + d.split(".")[1] + ".py" for d in RECIPE_FUNCTIONS[name]})
        problems = []
        if results.get(name, {}).get("recipe_hash") != old.recipe_hash(name):
            problems.append(f"{rev} is not the state its margins were measured in")
        if _git("diff", rev, "--", *files).strip():
            problems.append(f"the training helpers changed since {rev} ({', '.join(files)})")
        if json.dumps([asdict(c) for c in old.CLAIMS[name]]) != json.dumps([asdict(c) for c in CLAIMS[name]]) or \
                old.SETTINGS != SETTINGS:
            problems.append(f"the claims or settings changed since {rev}")
        if recipe_cells(name, text) != recipe_cells(name):
            problems.append(f"its recipe cells changed since {rev}")
        if problems:
            print(f"{name}: not re-recorded: " + "; ".join(problems))
            code = 1
            continue
        results[name]["recipe_hash"] = recipe_hash(name)
        print(f"{name}: the recipe measured at {rev} is today's; hash re-recorded ({results[name]['recipe_hash']})")
    _save(results)
    return code


def _text_file(text: str) -> Path:
    import tempfile

    f = tempfile.NamedTemporaryFile("w", suffix=".ipynb", delete=False, encoding="utf-8")
    f.write(text)
    f.close()
    return Path(f.name)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", help=f"by number or name (default: {', '.join(CLAIMS)})")
    ap.add_argument("--seeds", type=int, default=20, help="seeds 0 ... N-1 (default 20)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="notebooks run at once")
    ap.add_argument("--check", action="store_true", help="only say whether docs/margins.json is current")
    ap.add_argument("--rewrite", action="store_true",
                    help="no runs: rewrite docs/margins.json and .md from the stored values with the current rule")
    ap.add_argument("--same-as", metavar="REV",
                    help="no runs: where a notebook's recipe now is the recipe it was measured with at git revision "
                         "REV (its recipe cells, the training helpers, claims and settings all unchanged), record "
                         "the recipe hash as it is computed now")
    args = ap.parse_args(argv)
    names = [n for n in CLAIMS if not args.notebooks or any(n.startswith(a) for a in args.notebooks)]
    if not names:
        print(f"no live-training notebook matches {args.notebooks}; they are {', '.join(CLAIMS)}", file=sys.stderr)
        return 2
    results = load()
    if args.check:
        stale = [n for n in names if results.get(n, {}).get("recipe_hash") != recipe_hash(n)]
        for n in stale:
            print(f"{n}: docs/margins.json was measured with another recipe: run `python -m tools.margins {n[:2]}`")
        return 1 if stale else 0
    DOCS.mkdir(exist_ok=True)
    if args.same_as:
        return _same_as(args.same_as, names, results)
    if args.rewrite:
        _save(results)
        return 0
    for name in names:
        print(f"{name}: {args.seeds} seeds x {len(SETTINGS)} settings", flush=True)
        results[name] = measure(name, list(range(args.seeds)), list(SETTINGS), args.jobs)
        _save(results)
        for s in results[name]["claims"]:
            if s.get("verdict") not in (None, "OK"):
                print(f"  {s['verdict']}: {s['label']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
