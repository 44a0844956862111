"""What every exercise check relies on (helpers/checks/base.py): a learner's function that raises, hangs,
returns the wrong kind of thing, or calls the helper it was meant to replace gets one plain sentence."""

import math
import time

import pytest
import torch

from helpers.checks.base import ExerciseError, call, exercise, named, number_result, passed, tensor_result
from helpers.softmax import softmax as renamed_softmax


def test_a_function_that_is_not_written_yet():
    def todo(x):
        raise NotImplementedError()
    with pytest.raises(ExerciseError, match="not written yet"):
        call(todo, 1, what="f(x)")


def test_a_check_calls_the_function_by_the_name_the_learner_gave_it():
    """The name of the learner's `def`, not the check's own word for it; the check's word when there is none."""
    import functools

    from helpers import checks

    def stable_softmax(x):
        raise NotImplementedError()
    assert named(stable_softmax, "softmax", "(x)") == "stable_softmax(x)"
    for nameless in (lambda x: x, functools.partial(max, 0), object()):
        assert named(nameless, "softmax", "(x)") == "softmax(x)"
    with pytest.raises(ExerciseError, match=r"^stable_softmax\(x\): not written yet"):
        checks.check_softmax(stable_softmax)

    def my_softmax(x):
        return x.exp() / x.exp().sum(1, keepdim=True)   # a wrong answer (rows): its message names it too
    with pytest.raises(ExerciseError, match=r"^Your my_softmax normalises each \*row\*"):
        checks.check_softmax(my_softmax)


def test_a_crash_becomes_one_sentence_naming_the_error():
    with pytest.raises(ExerciseError, match=r"f\(x\) raised ZeroDivisionError: division by zero") as e:
        call(lambda x: x / 0, 1, what="f(x)")
    assert e.value.__cause__ is None and e.value.__suppress_context__


def test_a_function_that_runs_too_long_is_stopped():
    stopped = []

    def sleeper():
        try:
            time.sleep(30)
        finally:
            stopped.append(True)   # reached only when the timer interrupts the sleep, not after 30 s
    with pytest.raises(ExerciseError, match="more than 1 s"):
        call(sleeper, what="f()", limit=1)
    assert stopped


FRESH_KERNEL = r"""
import sys
import torch
import helpers.checks.base as base
from helpers import checks
from helpers.checks import ExerciseError
sys.path.insert(0, "tests/unit/checks")
from test_checks_01_02 import train_zero_layer

assert "torch._dynamo.convert_frame" not in sys.modules, "the test needs a kernel where no optimizer ran yet"
warm_up = base._warm_up
imported_before_the_clock = []

def watched_warm_up():
    warm_up()
    imported_before_the_clock.append("torch._dynamo.convert_frame" in sys.modules)

base._warm_up = watched_warm_up if WARM_UP_ON else (lambda: None)  # off: the safety net alone (an import the warm-up
                                                                      # did not foresee)

def sgd_answer(W_E, W_U, ids, steps, lr):   # a right answer whose first act imports torch._dynamo (seconds)
    W_E, W_U = W_E.clone().requires_grad_(), W_U.clone().requires_grad_()
    opt = torch.optim.SGD([W_E, W_U], lr=lr)
    t = torch.nn.functional.one_hot(ids[:-1], W_U.shape[0]).T.float()
    for _ in range(steps):
        opt.zero_grad()
        loss = -torch.log_softmax(W_U @ W_E @ t, dim=0)[ids[1:], torch.arange(len(ids) - 1)].mean()
        loss.backward()
        opt.step()
    return W_E.detach(), W_U.detach()

base.call.__kwdefaults__["limit"] = TIME_LIMIT
try:
    # under the profiler that refuses helpers (forbid), as in most checks: it makes imports many times slower
    case = torch.randn(3, 5), torch.randn(5, 3), torch.randint(0, 5, (30,)), 15, 1.0
    print("FIRST:", bool(base.call(sgd_answer, *case, what="train_zero_layer()", forbid=("torch.softmax",))))
except ExerciseError as e:
    print("FIRST:", e)
base.call.__kwdefaults__["limit"] = base.LIMIT
print("WARMED:", imported_before_the_clock[:1])
print("SECOND:", checks.check_train_zero_layer(sgd_answer), checks.check_train_zero_layer(train_zero_layer))
"""


# Each case is a fresh interpreter importing torch and its compiler (10-40 s): the other Pythons' runs
# (tests/tools/test_pythons.py) keep two, one warmed and one stopped mid-import; the main run has all four.
@pytest.mark.slow
@pytest.mark.parametrize("warm_up, limit", [pytest.param(True, 3.0, marks=pytest.mark.each_python), (False, 0.3),
                                            pytest.param(False, 1.0, marks=pytest.mark.each_python), (False, 2.0)])
def test_a_check_stopped_for_time_leaves_the_kernel_working(warm_up, limit):
    """A right answer that builds torch's first optimizer imports torch._dynamo (seconds, hundreds of modules). The
    check imports it before its timer starts, so the import is not counted; and when an import the check did not
    foresee is under way as the time runs out, the timer lets it finish, then restarts the clock once (for torch's
    compiler) or stops the answer right after. Stopped in
    the middle (limits of 0.3, 1 and 2 s land at different points of it), the import left modules half initialised,
    and every later check in the kernel failed on them ("module 'sympy' has no attribute 'printing'") until a
    restart, naming the learner's code."""
    import subprocess
    import sys
    from pathlib import Path
    code = FRESH_KERNEL.replace("WARM_UP_ON", str(warm_up)).replace("TIME_LIMIT", str(limit))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 0, done.stdout + done.stderr
    first = next(line for line in done.stdout.splitlines() if line.startswith("FIRST:"))
    if warm_up:   # the answer's own work took 1 s at most with 4 busy processes on 2 cores (docs/check_limit.md)
        assert first == "FIRST: True" and "WARMED: [True]" in done.stdout, done.stdout
    else:  # unforeseen: the clock restarts once after the import, and the answer's own work may still take too long
        assert first == "FIRST: True" or \
            f"train_zero_layer() ran for more than {limit:g} s on a tiny input and was stopped" in first or \
            f"train_zero_layer() took more than {limit:g} s on a tiny input" in first, first
    assert "SECOND: True True" in done.stdout, done.stdout + done.stderr


@pytest.mark.slow  # starts a Python
@pytest.mark.each_python
def test_a_check_on_an_answer_without_an_optimizer_does_not_import_the_compiler():
    """The warm-up (torch._dynamo: about a second and 80 MB) runs only for an answer that may build an optimizer:
    a fresh interpreter checks exercise 2.1's right answer without it."""
    import subprocess
    import sys
    from pathlib import Path
    code = ("import sys\nfrom helpers import checks\nsys.path.insert(0, 'tests/unit/checks')\n"
            "from test_checks_01_02 import stable_softmax\n"
            "assert checks.check_softmax(stable_softmax)\nprint('COMPILER:', 'torch._dynamo' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 0 and "COMPILER: False" in done.stdout, done.stdout + done.stderr


def _sgd_answer(W, steps):
    opt = torch.optim.SGD([W], lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        (W ** 2).sum().backward()
        opt.step()
    return W


def _calls_a_notebook_function(W, steps):
    return _sgd_answer(W, steps)


def _trains_with_the_helper(model, ids):
    from helpers import train
    return train.train(model, ids, 1)


def _by_hand(W, steps):  # gradient descent without an optimizer (exercise 2.3's way)
    for _ in range(steps):
        W = W - 0.1 * 2 * W
    return W


def _steps_the_given_one(model, optimizer, batch):  # exercise 8.2's train_step: the check gives the series' AdamW
    loss = torch.nn.functional.cross_entropy(model(batch[:, :-1]), batch[:, 1:])
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()


def test_which_answers_may_build_an_optimizer():
    import functools

    from helpers.checks.base import _may_optimize
    from helpers.optim import AdamW

    w = torch.nn.Parameter(torch.zeros(2))
    assert _may_optimize(_sgd_answer, ())
    assert _may_optimize(_calls_a_notebook_function, ())                      # through a function it calls
    assert _may_optimize(_trains_with_the_helper, ())                          # through helpers.train
    assert _may_optimize(functools.partial(_sgd_answer, steps=3), ())
    assert _may_optimize(lambda m, b: AdamW(m.parameters(), lr=1e-3), ())    # the series' own optimizer
    assert _may_optimize(lambda m, opt, b: opt.step(), (None, torch.optim.SGD([w], lr=0.1), None))  # one given
    assert _may_optimize(type("Stepper", (), {"__call__": lambda self, W: _sgd_answer(W, 1)})(), ())
    assert not _may_optimize(_by_hand, ())
    assert not _may_optimize(_steps_the_given_one, (None, AdamW([w], lr=0.1), None))  # exercise 8.2: no warm-up
    assert not _may_optimize(renamed_softmax, ())
    assert not _may_optimize(lambda x: x.exp() / x.exp().sum(0), ())


def test_an_import_of_the_compiler_the_check_did_not_foresee_restarts_the_clock_once(monkeypatch):
    """An optimizer the warm-up did not foresee imports torch's compiler under the timer (seconds): the clock
    restarts once after it, so the import is not counted against the answer; a second slow stretch is."""
    import sys
    import types

    from helpers.checks import base
    monkeypatch.setattr(base, "COMPILER", "gt_compiler_stand_in")
    monkeypatch.delitem(sys.modules, "gt_compiler_stand_in", raising=False)

    def compiles_then_works(pause):
        time.sleep(0.7)                                                   # "the import"
        sys.modules["gt_compiler_stand_in"] = types.ModuleType("gt_compiler_stand_in")
        time.sleep(pause)                                                 # the answer's own work
        return True

    assert call(compiles_then_works, 0.5, what="f()", limit=1)
    monkeypatch.delitem(sys.modules, "gt_compiler_stand_in")
    with pytest.raises(ExerciseError, match="more than 1 s"):
        call(compiles_then_works, 1.5, what="f()", limit=1)
    with pytest.raises(ExerciseError, match="more than 1 s"):   # imported already: no restart
        call(compiles_then_works, 0.5, what="f()", limit=1)


def test_outside_the_main_thread_a_slow_function_is_named_after_it_returns():
    import threading

    said = []

    def in_a_thread():         # no SIGALRM there (a widget's callback, a test runner's thread): timed afterwards
        try:
            call(lambda: time.sleep(0.05), what="slow()", limit=0.01)
        except ExerciseError as e:
            said.append(str(e))
    worker = threading.Thread(target=in_a_thread)
    worker.start()
    worker.join()
    assert said and "slow() took more than 0.01 s on a tiny input" in said[0]


def test_passing_the_result_instead_of_the_function():
    with pytest.raises(ExerciseError, match="no parentheses"):
        call(torch.ones(3), what="f(x)")


@pytest.mark.parametrize("forbidden, fn", [
    ("helpers.softmax.softmax", lambda x: renamed_softmax(x, dim=0)),   # imported under another name
    ("torch.softmax", lambda x: torch.softmax(x, 0)),
    ("torch.Tensor.softmax", lambda x: x.softmax(0)),                   # the method form
])
def test_calling_the_helper_the_exercise_replaces_is_refused(forbidden, fn):
    with pytest.raises(ExerciseError, match=f"calls {forbidden}"):
        call(fn, torch.randn(4), what="f(x)",
             forbid=("helpers.softmax.softmax", "torch.softmax", "torch.Tensor.softmax"))


def test_writing_the_computation_yourself_is_allowed():
    x = torch.randn(4)
    out = call(lambda x: x.exp() / x.exp().sum(), x, what="f(x)", forbid=("helpers.softmax.softmax", "torch.softmax"))
    torch.testing.assert_close(out, torch.softmax(x, 0))


@pytest.mark.parametrize("out, message", [
    (None, "returned None"),
    ("text", "should return a tensor"),
    (torch.ones(2, 3), r"shape \(2, 3\), expected \(3, 2\)"),
    (torch.ones(3, 2, dtype=torch.long), "integer"),
    (torch.ones(3, 2, dtype=torch.bool), "bool"),
    (torch.full((3, 2), math.nan), "NaN"),
    (torch.full((3, 2), math.inf), "infinity"),
])
def test_a_returned_tensor_of_the_wrong_kind(out, message):
    with pytest.raises(ExerciseError, match=message):
        tensor_result(out, (3, 2), "f(x)")


def test_a_right_tensor_comes_back_as_float64():
    out = tensor_result(torch.ones(3, 2), (3, 2), "f(x)")
    assert out.dtype == torch.float64


@pytest.mark.parametrize("out, message", [
    (torch.ones(2), "one number"), ("3", "should be a number"), (True, "should be a number"),
    (math.nan, "nan"), (math.inf, "inf"),
])
def test_a_returned_number_of_the_wrong_kind(out, message):
    with pytest.raises(ExerciseError, match=message):
        number_result(out, "f(x)")


def test_numbers_in_any_form():
    assert number_result(torch.tensor([2.5]), "f") == 2.5 and number_result(3, "f") == 3.0


def test_exercise_records_the_helpers_that_answer_it():
    @exercise(answered_by=("helpers.softmax.softmax",))
    def check_x(fn):
        return passed("ok")
    assert check_x.answered_by == ("helpers.softmax.softmax",)


def test_in_jupyter_a_failed_check_shows_its_message_alone():
    """IPython asks an exception for _render_traceback_ before formatting a traceback."""
    from IPython.core.interactiveshell import InteractiveShell

    shown = []
    shell = InteractiveShell.instance()
    try:
        shell._showtraceback = lambda etype, value, stb: shown.append(stb)
        try:
            raise ExerciseError("the columns must sum to 1")
        except ExerciseError:
            shell.showtraceback()
    finally:
        InteractiveShell.clear_instance()
    assert shown == [["\x1b[0;31mExerciseError\x1b[0m: the columns must sum to 1"]]


def test_in_jupyter_an_unwritten_exercise_is_reported_on_stderr_and_a_wrong_one_raises(capsys):
    """So "Run All" on a fresh learner copy runs to the end; nbgrader scores stderr in a check cell 0."""
    from IPython.core.interactiveshell import InteractiveShell

    @exercise(answered_by=())
    def check_double(fn):
        if call(fn, 2, what="double(2)") != 4:
            raise ExerciseError("double(2) should be 4")
        return passed("ok")

    def todo(x):
        raise NotImplementedError()
    with pytest.raises(ExerciseError, match="not written yet"):   # outside Jupyter: raised
        check_double(todo)
    InteractiveShell.instance()
    try:
        assert check_double(todo) is None
        assert "✗ double(2): not written yet" in capsys.readouterr().err
        with pytest.raises(ExerciseError, match="should be 4"):
            check_double(lambda x: x)
        assert check_double(lambda x: 2 * x) is None          # no "True" output for nbgrader to parse
        assert "✔ ok" in capsys.readouterr().out
    finally:
        InteractiveShell.clear_instance()


def test_the_guarded_comparison_takes_any_float_dtype_and_container():
    import numpy as np

    from helpers.checks.base import close, number_result

    want = torch.tensor([[0.25, 0.5], [1.0, 2.0]])
    for got in (want.double(), want.half(), want.tolist(), np.asarray(want.numpy(), dtype=np.float64)):
        assert close(got, want)                               # torch.allclose alone refuses float64 vs float32
    assert not close(want.double().T, want) and not close(want[0], want)   # other numbers, other shape
    assert number_result(np.float32(1.5), "f") == 1.5 and number_result(np.array(2.5), "f") == 2.5
    assert number_result(np.array([3.0]), "f") == 3.0
    with pytest.raises(ExerciseError, match=r"one number, got an array of shape \(2,\)"):
        number_result(np.array([1.0, 2.0]), "f")
