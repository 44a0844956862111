"""Same results on every learner's machine: the "other machines" pass.

A learner's CPU rounds differently from the one a notebook was written on (another instruction set,
another BLAS code path, another thread count), and live training amplifies the last bit. So every
notebook runs once more here, on a fresh kernel, with torch's CPU kernels forced to another
instruction set, MKL forced onto another code path and another thread count, as "other machine A"; a notebook that
trains live runs as "other machine B" (AVX2) too (``OTHER_MACHINES``, ``runs``). Each run must pass the same asserts
and print exactly the committed text in every checked cell (tagged ``nbval-check-output``).

The "other machine A" run also carries tests/support/containers.py's probes: every exercise's check must accept
the right answer as float64, a list and a numpy array, and every figure shown (the kernel's inline backend, as in
JupyterLab) must come with its data in words.

Together with nbval's run (same checks, this machine's own settings) this is also the determinism
test for every notebook: the committed outputs come from a fresh run (``tools/notebooks.py
refresh``), nbval's run must reproduce them, and so must this one.

The negative control shows the perturbation is real: a short training run gives different weights,
bit for bit, under each of ``OTHER_MACHINES`` than under the normal settings (and identical weights when the
normal run is repeated). If a future torch ignored these variables, the pass above would prove
nothing, and the control would fail and say so.

GT_OTHER_MACHINE=02,06 limits the pass to some notebooks (by number); =0 skips it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from support import containers
from tools import margins
from tools.clean import CHECK_TAG, is_checked

pytestmark = [pytest.mark.slow, pytest.mark.apart]  # every notebook again under two other-machine settings, each a run


ROOT = Path(__file__).resolve().parents[2]

# Two other machines, as far as one machine can pretend (tools/margins.py's SETTINGS, the same the margins are
# measured under): A — torch's vectorised CPU kernels without AVX2/AVX-512 (the "default" code path), MKL's
# conditional-numerical-reproducibility path instead of the one tuned for this CPU, oneDNN held to SSE4.1, and two
# threads instead of one; B — torch's AVX2 kernels (another instruction set than this machine's AVX-512, where it
# has it), MKL's reproducible path, one thread. Each gives another training trajectory from the same seed.
OTHER_MACHINES = {name: env for name, env in margins.SETTINGS.items() if name != "this machine"}
PERTURBED = OTHER_MACHINES["other machine A"]


def chosen() -> list[Path]:
    series = sorted((ROOT / "notebooks").glob("*.ipynb"))
    want = os.environ.get("GT_OTHER_MACHINE", "all").strip()
    if want == "0":
        return []
    if want in ("", "all"):
        return series
    picks = [s.strip() for s in want.split(",")]
    return [nb for nb in series if any(nb.name.startswith(p) for p in picks)]


def checked_outputs(nb: nbformat.NotebookNode) -> dict[int, str]:
    """Cell index -> the text nbval compares (stdout and plain-text results) of every checked cell."""
    out = {}
    for i, cell in enumerate(nb.cells):
        if is_checked(cell):
            out[i] = "".join(o.get("text", "") if o.output_type == "stream" and o.get("name") == "stdout"
                             else o.get("data", {}).get("text/plain", "") if o.output_type == "execute_result"
                             else "" for o in cell.outputs)
    return out


PROBED_ON = "other machine A"  # the run that also carries tests/support/containers.py's probes


def run_notebook(path: Path, env: dict[str, str], nb: nbformat.NotebookNode | None = None) -> nbformat.NotebookNode:
    """Execute ``nb`` (default: a copy of the notebook) on a fresh kernel started with ``env``; raises on a failing
    cell."""
    nb = nbformat.read(path, as_version=4) if nb is None else nb
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})

    # (in a thread of its own: an event loop may already run in this one, e.g. Playwright's)
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, client.async_execute(env=env)).result()
    return nb


def perturbed_env(machine: str = "other machine A") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA")}
    return {**env, **OTHER_MACHINES[machine]}


def runs() -> list[tuple[Path, str]]:
    """Every notebook as "other machine A"; as "other machine B" (AVX2), the notebooks that train live, whose training
    amplifies the last bit. The others compute from data and shipped checkpoints: A's other instruction set (and
    nbval's run on the test machine, an AVX2 one in CI) covers how their printed figures round."""
    live = set(margins.LIVE)
    return [(path, machine) for path in chosen() for machine in OTHER_MACHINES
            if machine == "other machine A" or path.stem in live]


@pytest.mark.parametrize("path, machine", runs(), ids=lambda v: v.stem if isinstance(v, Path) else v.split()[-1])
def test_notebook_on_another_machine_prints_the_committed_checked_outputs(path, machine):
    committed = checked_outputs(nbformat.read(path, as_version=4))
    assert committed, f"{path.name} has no `{CHECK_TAG}` cell: nothing to compare"
    settings = OTHER_MACHINES[machine]
    probing = machine == PROBED_ON
    env = perturbed_env(machine)
    if probing:
        env.pop("MPLBACKEND", None)  # the kernel's own inline backend: it shows figures as JupyterLab does
    try:
        ran = run_notebook(path, env, containers.probed(path) if probing else None)
    except CellExecutionError as e:
        pytest.fail(f"{path.name} fails on '{machine}' ({' '.join(f'{k}={v}' for k, v in settings.items())}):"
                    f" an assert or a cell that passes here breaks when the CPU rounds differently.\n{e}")
    if probing:
        found = containers.problems(path, ran)
        assert not found, f"{path.name}, the probes (tests/support/containers.py):\n" + "\n".join(found)
        ran = containers.without_probes(ran)
    got = checked_outputs(ran)
    diffs = [i for i in committed if committed[i] != got.get(i)]
    assert not diffs, "\n".join(
        f"{path.name} cell {i} prints something else on '{machine}' — a printed number depends on float "
        f"rounding (round it, or print it outside a checked cell and assert it with a margin):\n"
        f"--- committed\n{committed[i]}--- under {settings}\n{got.get(i)}" for i in diffs)


# A short training run of the kind the notebooks do (notebook 06's facts task, all three models).
_TRAIN = """
import hashlib, torch, helpers
from helpers.lessons.facts import FactsTask, train_facts
from helpers.model.config import Config
from helpers.train import fresh_model
helpers.setup(0)
task = FactsTask.make(n_people=32, n_things=4, n_colours=8, seed=0)
h = hashlib.sha256()
for d_model, d_mlp in ((32, 0), (32, 128)):
    cfg = Config(n_vocab=task.n_vocab, d_model=d_model, n_ctx=2, n_layers=1, n_heads=2, d_mlp=d_mlp)
    model = fresh_model(cfg, seed=0)
    train_facts(model, task, steps=40)
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
print(torch.backends.cpu.get_cpu_capability(), torch.get_num_threads(), h.hexdigest())
"""


def _train_fingerprint(env: dict[str, str]) -> tuple[str, str, str]:
    done = subprocess.run([sys.executable, "-c", _TRAIN], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    capability, threads, digest = done.stdout.split()
    return capability, threads, digest


def test_negative_control_the_other_machines_really_round_differently():
    normal_env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR",
                                                                    "ONEDNN_MAX_CPU_ISA")} | {"GT_THREADS": "1"}
    spinning = perturbed_env("other machine A") | {"OMP_WAIT_POLICY": "ACTIVE"}  # the root conftest.py's PASSIVE off
    envs = [normal_env, normal_env] + [perturbed_env(m) for m in OTHER_MACHINES] + [spinning]
    with ThreadPoolExecutor(2) as pool:
        normal, again, *others, spun = [r.result() for r in [pool.submit(_train_fingerprint, env) for env in envs]]
    assert normal == again, "the same settings must give bit-for-bit identical weights (a seeding bug?)"
    assert spun == others[0], \
        "OpenMP's wait policy changed the numbers of a two-thread run: take OMP_WAIT_POLICY out of the root conftest.py"
    for (machine, settings), other in zip(OTHER_MACHINES.items(), others):
        want = (settings["ATEN_CPU_CAPABILITY"].upper(), settings["GT_THREADS"])
        assert other[:2] == want, f"the perturbation of {machine} did not take effect: {other}"
        assert other[2] != normal[2], (
            f"under '{machine}' training gave bit-for-bit the same weights as here, so its pass proves nothing: "
            f"torch ignores {settings} on this machine ({normal[0]}). Find another perturbation.")
