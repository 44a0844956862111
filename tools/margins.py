"""Margins of the notebooks' live-training claims, measured over many seeds and other machines.

    .venv/bin/python -m tools.margins                     # every notebook that trains live: 20 seeds x 3 settings
    .venv/bin/python -m tools.margins 09 --seeds 40       # one notebook, more seeds
    .venv/bin/python -m tools.margins --jobs 2            # two notebooks' kernels at a time (default: the cores)

A notebook that trains a model (02, 06, 09; 05 times two products) states its claims with one call each,
``claim(words, value, op, bound)`` (helpers/plots/claims.py): it checks this run and shows it among the runs
measured here. A learner's CPU rounds the last bit differently from the one the notebook was written on, and
training amplifies it, so every learner's run is, in effect, another sample of the recipe: a bound is only safe if it
lies beyond what every seed and every CPU can give. This tool runs each notebook itself, top to bottom on a fresh
kernel, once per seed (``GT_SEED``, which ``helpers.setup`` passes on to the notebook's training) under each of
``SETTINGS`` — this machine's own and two "other machines" (one on AVX2-only code paths) — with
``GT_CLAIMS_FILE`` set, so that every ``claim`` call appends what it saw (words, value, op, bound) instead of
raising. The notebook is the recipe and the list of claims: there is no second copy of either here.

It writes helpers/margins.json (every claim's value in every run, and the recipe hash each notebook was measured
with; shipped with the helpers, read by the claims the learner sees) and docs/margins.md (a table: claim, bound,
min / median / max / standard deviation, headroom). tests/notebooks/test_margins.py checks, cheaply, that the data is
current
(the recipe hash: the notebook's training and claim cells and the helper functions that train, without comments,
docstrings, drawing, imports or bounds), that every claim a
notebook makes was measured, and that each keeps the headroom below with the bound the notebook has today; the
full sweep (about an hour on 2 cores) runs only from here.

Headroom, the rule: a claim is OK when its bound lies beyond the worst value of every run, and at least
``MIN_SIGMAS`` standard deviations from the median, the deviation measured on the bound's side only (the
root-mean-square distance from the median of the runs on that side: a skewed claim's far tail says nothing about
crossing). Under a normal approximation that is a crossing rate under 1 in 700 runs: well under 1 in 200, a
class of 200 laptops. A yes/no claim is OK when it held in every run. A claim that cannot meet the rule must change
(a comparison, a claim only measured), not the seed count.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DATA = ROOT / "helpers" / "margins.json"   # shipped with the helpers: the claims the learner sees read it
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


# The notebooks whose claims come from a live run, and the helper functions whose code is part of each one's recipe
# (their source goes into the recipe hash): read from each notebook's manifest, helpers/series/NN_name.toml,
# [training] live and recipe_functions.
def _live() -> dict[str, list[str]]:
    from helpers import series

    return {nb.name: list(nb.recipe_functions) for nb in series.notebooks() if nb.trains_live}


RECIPE_FUNCTIONS = _live()
LIVE = list(RECIPE_FUNCTIONS)   # the notebooks whose claims come from a live run: each states them with claim(...)
TRAINS = ("fresh_model(", "train(", "train_induction(", "fit_to_counts(", "compare_fact_models(", "sweep(",
          "train_toy(", "train_sae(", "fact_model(")


def notebook_path(name: str) -> Path:
    return ROOT / "notebooks" / f"{name}.ipynb"


def _code_without_comments(source: str) -> str:
    """A cell's code with comments and blank lines removed (editing a comment is not a new recipe). The comments are cut
    out of the text where tokenize finds them, never re-spelt by ``untokenize``: the recipe hash must be the same on
    every Python the series supports, and untokenize's spacing is not."""
    lines = source.splitlines()
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        comments = [t.start for t in tokens if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        comments = []
    for row, col in comments:
        lines[row - 1] = lines[row - 1][:col]
    return "\n".join(line.rstrip() for line in lines if line.strip())


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


def _without_docstrings(source: str) -> str:
    """A function's or class's source without its docstrings (its own and its methods'): a docstring documents, like
    a comment, and computes nothing, so rewording one is not a new recipe. Lines are cut where ast finds the
    docstrings, never re-spelt (the hash must be the same on every Python the series supports)."""
    import ast
    import textwrap

    text = textwrap.dedent(source)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return source
    drop = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                drop.update(range(first.lineno, first.end_lineno + 1))
    return "\n".join(line for i, line in enumerate(text.splitlines(), 1) if i not in drop)


def _claims_without_bounds(source: str) -> str:
    """A cell's source with every ``claim(...)`` call cut to its words and value: a bound is checked against the stored
    values (tests/notebooks/test_margins.py), so moving one needs no new measurement; the value's expression does.
    The cut is made in the text (ast gives the positions), not by ``ast.unparse``, whose spelling differs between
    Python versions."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:   # ast's columns count UTF-8 bytes
        return starts[lineno - 1] + len(lines[lineno - 1].encode()[:col].decode())

    cuts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "claim":
            kept = node.args[:2] + [k.value for k in node.keywords if k.arg == "value"]
            if not kept:
                continue
            last = max(kept, key=lambda n: (n.end_lineno, n.end_col_offset))
            end = offset(node.end_lineno, node.end_col_offset) - 1  # the closing parenthesis stays
            cuts.append((offset(last.end_lineno, last.end_col_offset), end))
    for start, end in sorted(cuts, reverse=True):
        source = source[:start] + source[end:]
    return source


def recipe_cells(name: str, notebook: str | None = None) -> list[str]:
    """The code cells that make up a notebook's recipe: the set-up cell, every cell that builds or trains a model,
    and every cell that states a claim; without their drawing and import statements, and claims without their bounds.
    ``notebook``: the notebook's text (default: the file as it is now)."""
    import nbformat

    nb = nbformat.reads(notebook, as_version=4) if notebook is not None else \
        nbformat.read(notebook_path(name), as_version=4)
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if "helpers.setup(" in cell.source or any(t in cell.source for t in TRAINS) or "claim(" in cell.source:
            cells.append(_code_without_comments(_claims_without_bounds(_without_drawing(cell.source))))
    return cells


def recipe_hash(name: str, notebook: str | None = None) -> str:
    """What a notebook's live claims depend on: its recipe cells, the helper functions that train (without their
    comments and docstrings), and the settings. A change to any of them needs a new measurement."""
    import importlib

    h = hashlib.sha256()
    for source in recipe_cells(name, notebook):
        h.update(source.encode())
    for dotted in RECIPE_FUNCTIONS[name]:
        module, attr = dotted.rsplit(".", 1)
        source = inspect.getsource(getattr(importlib.import_module(module), attr))
        h.update(_code_without_comments(_without_docstrings(source)).encode())
    h.update(json.dumps(SETTINGS, sort_keys=True).encode())
    return h.hexdigest()[:16]


def settings_env(setting: str, seed: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PERTURBED}
    env.update(SETTINGS[setting])
    env.update({"GT_SEED": str(seed), "MPLBACKEND": "Agg"})
    return env


def run_once(name: str, seed: int, setting: str, timeout: int = 900) -> dict:
    """Execute the notebook with ``GT_SEED=seed`` under ``setting`` (errors allowed: a failing cell is recorded, not
    fatal) with ``GT_CLAIMS_FILE`` set, and read what every ``claim`` call saw. Returns {"claims": {words: {"value",
    "op", "bound"}}, "failed_cells": [...], "seconds"}."""
    import asyncio
    import tempfile

    import nbformat
    from nbclient import NotebookClient

    from helpers.claims import RECORD

    nb = nbformat.read(notebook_path(name), as_version=4)
    # the cells after the last claim (and its check cell) cannot change a claim: they are not run
    last = max(i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and "claim(" in cell.source)
    while last + 1 < len(nb.cells) and "check" in nb.cells[last + 1].metadata.get("tags", []):
        last += 1
    nb.cells = nb.cells[:last + 1]
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(ROOT / "notebooks")}})
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "claims.jsonl"
        record.touch()
        env = settings_env(setting, seed) | {RECORD: str(record)}
        start = time.perf_counter()
        with ThreadPoolExecutor(1) as pool:  # (its own event loop, whatever runs in this thread)
            pool.submit(asyncio.run, client.async_execute(env=env)).result()
        seconds = round(time.perf_counter() - start, 1)
        lines = record.read_text(encoding="utf-8").splitlines()
    failed = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
              and any(o.output_type == "error" for o in cell.get("outputs", []))]
    claims = {}
    for line in lines:
        seen = json.loads(line)
        claims[seen.pop("words")] = seen   # (a claim stated twice, e.g. by a cell run again: the last one counts)
    return {"claims": claims, "failed_cells": failed, "seconds": seconds}


def holds(op: str | None, bound, value) -> bool | None:
    from helpers.claims import holds as _holds

    return _holds(op, tuple(bound) if isinstance(bound, list) else bound, value)


def summarise(words: str, op: str | None, bound, values: list) -> dict:
    """min / median / max / sd of a claim's values over every run, and its verdict under the headroom rule (for
    'between', the rule on each side)."""
    seen = [v for v in values if v is not None]
    out = {"words": words, "op": op, "bound": bound, "runs": len(seen)}
    if not seen:
        return out | {"verdict": "no value"}
    if isinstance(seen[0], bool) or op == "==":
        true = sum(bool(v) for v in seen) if op != "==" else sum(v == bound for v in seen)
        verdict = None if op is None else ("OK" if true == len(seen) else "FAILS")
        return out | {"true": true, "verdict": verdict}
    lo, mid, hi = min(seen), statistics.median(seen), max(seen)
    # (a run that never got there is math.inf: no deviation is finite then, and the claim fails below)
    sd = statistics.pstdev(seen) if all(math.isfinite(v) for v in seen) else math.inf
    out |= {"min": lo, "median": mid, "max": hi, "sd": sd}
    if op is None:
        return out | {"verdict": None}
    sides = [("<", bound[1]), (">", bound[0])] if op == "between" else [(op, bound)]
    verdicts, margins, sigmas_all, worsts = [], [], [], []
    for side_op, b in sides:
        upper = side_op in ("<", "<=")  # the bound is above the values
        worst = hi if upper else lo
        # the spread on the bound's side only (a semi-deviation about the median): a skewed claim's far tail, away
        # from the bound, says nothing about how often a run crosses it
        side = [v - mid for v in seen if (v > mid if upper else v < mid)]
        semi = math.sqrt(sum(d * d for d in side) / len(side)) if side else 0.0
        sigmas = abs(b - mid) / semi if semi > 0 else math.inf
        beyond = all(holds(side_op, b, v) for v in seen)
        verdicts.append("OK" if beyond and sigmas >= MIN_SIGMAS else ("TIGHT" if beyond else "FAILS"))
        margins.append((b - worst) if upper else (worst - b))
        sigmas_all.append(sigmas)
        worsts.append(worst)
    k = min(range(len(sides)), key=lambda i: sigmas_all[i])   # the tighter side speaks for the claim
    verdict = "FAILS" if "FAILS" in verdicts else ("TIGHT" if "TIGHT" in verdicts else "OK")
    return out | {"worst": worsts[k], "headroom": margins[k], "sigmas": sigmas_all[k], "verdict": verdict}


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return " and ".join(_fmt(x) for x in v)
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def summaries(r: dict) -> list[dict]:
    """Every claim of one notebook's measurement, summarised with the bound it was measured with."""
    return [summarise(words, c["op"], c["bound"], c["values"]) for words, c in r["claims"].items()]


def markdown(results: dict) -> str:
    """The text of docs/margins.md for these results."""
    lines = ["# Margins of the live-training claims", "",
             "Written by `python -m tools.margins` (its docstring says how and why); do not edit by hand. Each",
             "notebook that trains a model ran top to bottom once per seed under each setting; every `claim(...)` it",
             "makes recorded its value. The notebooks show the same runs beside the learner's own",
             "(helpers/margins.json). **Headroom rule:** the bound lies beyond the",
             f"worst value seen and at least {MIN_SIGMAS:g} standard deviations from the median (OK), the deviation",
             "taken on the bound's side of the median only (σ toward); beyond the worst but closer (TIGHT);",
             "crossed by some run (FAILS). A yes/no claim is OK when it held in every run.",
             "Settings: " + "; ".join(f"{k}: " + ", ".join(f"`{a}={b}`" for a, b in v.items())
                                     for k, v in SETTINGS.items()) + ".", ""]
    for name, r in results.items():
        lines += [f"## {name}", "",
                  f"{r['runs']} runs: seeds {r['seeds'][0]}-{r['seeds'][-1]} under {', '.join(r['settings'])}; "
                  f"measured {r['date']} on {r['machine']}; recipe hash `{r['recipe_hash']}`; "
                  f"{r['seconds_per_run']:.0f} s per run.", ""]
        if r.get("recorded_by"):
            lines += [f"Recorded by {r['recorded_by']}.", ""]
        if r["failed_runs"]:
            lines += ["Runs in which a cell failed: " + "; ".join(
                f"seed {f['seed']} ({f['setting']}): cells {f['cells']}" for f in r["failed_runs"]), ""]
        lines += ["| claim | bound | min | median | max | sd | headroom (σ toward, from median) | verdict |",
                  "|---|---|---|---|---|---|---|---|"]
        for s in summaries(r):
            s = s | {"words": s["words"].replace("|", "\\|")}  # (a bar inside a table cell must be escaped)
            bound = "" if s["op"] is None else f"{s['op']} {_fmt(s['bound'])}"
            if "true" in s:
                lines.append(f"| {s['words']} | {bound} | | {s['true']} of {s['runs']} runs | | | | "
                             f"{s['verdict'] or 'measured'} |")
            elif "min" in s:
                room = "" if s["op"] is None else f"{_fmt(s['headroom'])} ({_fmt(s['sigmas'])} σ)"
                lines.append(f"| {s['words']} | {bound} | {_fmt(s['min'])} | {_fmt(s['median'])} | "
                             f"{_fmt(s['max'])} | {_fmt(s['sd'])} | {room} | {s['verdict'] or 'measured'} |")
            else:
                lines.append(f"| {s['words']} | {bound} | | | | | | {s['verdict']} |")
        lines.append("")
    return "\n".join(lines)


def load() -> dict:
    """helpers/margins.json, as stored."""
    return json.loads(DATA.read_text(encoding="utf-8")) if DATA.exists() else {}


def _round(v):
    """A stored value: 6 significant digits are far finer than any run-to-run spread, and keep the file small."""
    return float(f"{v:.6g}") if isinstance(v, float) else v


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
    words = list(dict.fromkeys(w for *_, out in done for w in out["claims"]))   # in the notebook's order
    claims = {}
    for w in words:
        last = next(out["claims"][w] for *_, out in reversed(done) if w in out["claims"])
        claims[w] = {"op": last["op"], "bound": last["bound"],
                     "values": [_round(out["claims"].get(w, {}).get("value")) for *_, out in done]}
    import platform

    import torch

    return {"recipe_hash": measured_with, "seeds": seeds, "settings": settings, "runs": len(done),
            "date": time.strftime("%Y-%m-%d"),
            "machine": f"{platform.processor() or platform.machine()}, torch {torch.__version__} "
                       f"({torch.backends.cpu.get_cpu_capability()})",
            "seconds_per_run": round(statistics.mean(out["seconds"] for *_, out in done), 1),
            "failed_runs": [{"seed": s, "setting": st, "cells": out["failed_cells"]} for s, st, out in done
                            if out["failed_cells"]],
            "run_order": [[s, st] for s, st, _ in done],
            "claims": claims}


def _save(results: dict) -> None:
    ordered = {n: results[n] for n in LIVE if n in results}
    DATA.write_text(json.dumps(ordered, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (DOCS / "margins.md").write_text(markdown(ordered), encoding="utf-8")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", help=f"by number or name (default: {', '.join(LIVE)})")
    ap.add_argument("--seeds", type=int, default=20, help="seeds 0 ... N-1 (default 20)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="notebooks run at once")
    ap.add_argument("--check", action="store_true", help="only say whether helpers/margins.json is current")
    ap.add_argument("--rewrite", action="store_true", help="no runs: rewrite docs/margins.md from the stored values")
    args = ap.parse_args(argv)
    names = list(LIVE) if not args.notebooks else [n for a in args.notebooks for n in LIVE if n.startswith(a)]
    if not names:
        print(f"no live-training notebook matches {args.notebooks}; they are {', '.join(LIVE)}", file=sys.stderr)
        return 2
    results = load()
    if args.check:
        stale = [n for n in names if results.get(n, {}).get("recipe_hash") != recipe_hash(n)]
        for n in stale:
            print(f"{n}: helpers/margins.json was measured with another recipe: run `python -m tools.margins {n[:2]}`")
        return 1 if stale else 0
    if args.rewrite:
        _save(results)
        return 0
    for name in names:
        print(f"{name}: {args.seeds} seeds x {len(SETTINGS)} settings", flush=True)
        measured_now = measure(name, list(range(args.seeds)), list(SETTINGS), args.jobs)
        results = load() | {name: measured_now}   # (the file as it is now: another notebook may have been written)
        _save(results)
        for s in summaries(results[name]):
            if s.get("verdict") not in (None, "OK"):
                print(f"  {s['verdict']}: {s['words']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
