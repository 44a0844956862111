"""What every exercise check shares: calling the learner's function safely (a crash, a hang, a wrong
type, a NaN each become one plain sentence), one error type, and the record of which helpers would
answer an exercise (so a test can make sure the learner copy never shows them before it)."""

from __future__ import annotations

import dis
import functools
import importlib
import inspect
import math
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable

import torch

from helpers.checks.offer import offer as answer_offer

LIMIT = 20.0  # seconds one call of a learner's function may take. Every check case is tiny: the slowest right answer
# of the whole exercise suite took 1 s on 2 cores with four CPU-bound processes beside it, once the imports a right
# answer may need are made before the clock starts (`_warm_up`). The rest is headroom for a slower laptop; an endless
# loop is still named within LIMIT seconds. The measurement: docs/check_limit.md (tools/busy.py).


ATTEMPTED: set[str] = set()  # the checks that ran on a function the learner wrote, in this process (answers.py)


class ExerciseError(AssertionError):
    """The learner's answer is not right yet; the message says why and what to try."""

    exercise_check = ""  # the check that raised it, set when it comes from a learner's attempt

    def _render_traceback_(self) -> list[str]:
        """In Jupyter (IPython asks exceptions for this), show the message alone, in red, instead of a
        traceback through the check's code; the cell still fails, so nbgrader scores it 0. After an attempt,
        a last line says how to see the series' answer."""
        offer = answer_offer(self.exercise_check, right=False) if self.exercise_check else ""
        return [f"\x1b[0;31m{type(self).__name__}\x1b[0m: {self}"] + ([offer] if offer else [])


class NotWrittenYet(ExerciseError):
    """The learner's function still raises NotImplementedError (the learner copy as handed out)."""


def _in_jupyter() -> bool:
    shell = sys.modules.get("IPython")
    return shell is not None and shell.get_ipython() is not None


def exercise(*, answered_by: tuple[str, ...] = ()) -> Callable:
    """Mark a ``check_*`` function as an exercise's check.

    answered_by: dotted names of the helpers that compute what the exercise asks for (for example
    ``"helpers.ngrams.normalize_columns"``). The learner copy must not call them above the exercise:
    ``tests/notebooks/test_exercises.py`` traces every call a notebook cell makes to them.

    In Jupyter, an exercise not written yet is reported on stderr instead of raised, so "Run All" on a
    fresh learner copy runs to the end; nbgrader still scores such a cell 0 (it counts stderr as failing).
    A wrong answer always raises. Outside Jupyter (tests, scripts) both raise, and a right answer returns
    True (in Jupyter None: the printed ✔ line says it).
    """
    def mark(check: Callable) -> Callable:
        @functools.wraps(check)
        def run(*args, **kwargs):
            try:
                ok = check(*args, **kwargs)
            except NotWrittenYet as e:
                if not _in_jupyter():
                    raise
                print(f"✗ {e}", file=sys.stderr)
                return None
            except Exception as e:  # a wrong answer, or the check's own code broke on it: an attempt all the same
                ATTEMPTED.add(check.__name__)
                if isinstance(e, ExerciseError):
                    e.exercise_check = check.__name__  # (its display in Jupyter offers the answer)
                raise
            ATTEMPTED.add(check.__name__)
            if not _in_jupyter():
                return ok
            offer = answer_offer(check.__name__, right=True)
            if offer:
                print(offer)
            # in Jupyter the ✔ line is the answer: no "True" under it, which nbgrader would also try
            # to read as a partial-credit score
            return None
        run.answered_by = tuple(answered_by)
        return run
    return mark


def named(fn: Any, name: str, args: str = "") -> str:
    """How a check's messages call the learner's function: by the name their cell's ``def`` gave it
    (``fn.__name__``: ``stable_softmax``, ``my_mlp``), followed by ``args`` ("(x)"). ``name``, the check's own
    word for it, stands in when the function has no name of its own (a lambda, a functools.partial, an object)."""
    own = getattr(fn, "__name__", None)
    return f"{own if isinstance(own, str) and own.isidentifier() else name}{args}"


class _TooLong(Exception):
    pass


_warm = False


def _warm_up() -> None:
    """Import, once, what a right answer may pull in on its first use, before any timer or profiler starts.

    A first optimizer step imports torch._dynamo (hundreds of modules): seconds on a busy machine, many times
    that under the profiler of ``_watching``. Timed, it made a right answer "too slow"; interrupted, it left
    the module half imported, and every later check in the kernel failed on it until a restart. It costs a
    second and 80 MB, so ``call`` runs it only for an answer that may build an optimizer (``_may_optimize``); one
    it did not foresee is still safe: ``_time_limit`` never stops an import half way, and restarts its clock once
    after one."""
    global _warm
    if _warm:
        return
    w = torch.nn.Parameter(torch.zeros(2))
    for opt in (torch.optim.SGD([w], lr=0.0), torch.optim.Adam([w], lr=0.0), torch.optim.AdamW([w], lr=0.0)):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(w[None], torch.zeros(1, dtype=torch.long)).backward()
        torch.nn.utils.clip_grad_norm_([w], 1.0)
        opt.step()
    _warm = True


# the words by which code builds an optimizer: torch.optim and its classes, the series' own (helpers.optim). Not
# .step() or .zero_grad(): stepping the optimizer a check gives imports nothing (a check gives the series' AdamW, and a
# torch.optim one given is caught by its type), so exercise 8.2's train_step does not pay the warm-up's 80 MB
OPTIMIZER_WORDS = ("optim", "Adam", "SGD", "RMSprop", "Adagrad", "Adadelta", "Adamax", "LBFGS", "Rprop", "ASGD",
                   "Optimizer", "optimizer")
_OPTIMIZER_MODULES = ("torch.optim", "helpers.optim", "helpers.train")


def _code_names(code) -> set[str]:
    """Every global and attribute name a code object and the functions nested in it use, and the modules they
    import inside it ("helpers.train" for ``from helpers import train``)."""
    names = set(code.co_names)
    module = None
    for ins in dis.get_instructions(code):
        if ins.opname == "IMPORT_NAME":
            module = ins.argval
            names.add(module)
        elif ins.opname == "IMPORT_FROM" and module:
            names.add(f"{module}.{ins.argval}")
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _code_names(const)
    return names


def _may_optimize(fn: Callable, args: tuple, depth: int = 3, seen: set | None = None) -> bool:
    """Whether ``fn`` (the learner's answer) may build or step an optimizer: it is given one, or its code or that of
    a function it calls (one the notebook defined, a helper: ``depth`` levels down) names one (``OPTIMIZER_WORDS``)
    or uses torch.optim, helpers.optim or helpers.train. A callable whose code cannot be read counts as may."""
    if any(isinstance(a, torch.optim.Optimizer) for a in args):
        return True
    seen = set() if seen is None else seen
    try:
        fn = inspect.unwrap(fn)
    except ValueError:  # a wrapper that wraps itself
        return True
    fn = getattr(fn, "func", fn)  # a functools.partial: the function it fills in
    code = getattr(fn, "__code__", None)
    if code is None:
        call_ = getattr(type(fn), "__call__", None)
        if inspect.isfunction(call_):  # an object with a __call__ written in Python
            return _may_optimize(call_, (), depth, seen)
        return not (inspect.isbuiltin(fn) or isinstance(fn, type))
    if code in seen:
        return False
    seen.add(code)
    module = getattr(fn, "__module__", None) or ""
    if module.startswith(_OPTIMIZER_MODULES):
        return True
    if module.startswith("torch"):  # torch's own functions: none builds an optimizer but torch.optim's
        return False
    names = _code_names(code)
    if any(word in name for name in names for word in OPTIMIZER_WORDS + _OPTIMIZER_MODULES):
        return True
    if depth == 0:
        return False
    scope = dict(getattr(fn, "__globals__", {}))
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # a cell not filled yet
            pass
    for name in names | set(code.co_freevars):
        obj = scope.get(name)
        if inspect.ismodule(obj):
            if obj.__name__.startswith(_OPTIMIZER_MODULES):
                return True
        elif callable(obj) and (inspect.isfunction(obj) or inspect.ismethod(obj) or isinstance(obj, type)
                                or hasattr(obj, "func")):
            if isinstance(obj, type):
                if (obj.__module__ or "").startswith(_OPTIMIZER_MODULES) or issubclass(obj, torch.optim.Optimizer):
                    return True
                continue
            if _may_optimize(obj, (), depth - 1, seen):
                return True
    return False


def _importing(frame) -> bool:
    """True while ``frame`` or a frame below it runs an import (Python's import system is itself Python code)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib."):
            return True
        frame = frame.f_back
    return False


COMPILER = "torch._dynamo"  # what a first optimizer step imports (``_warm_up``)


@contextmanager
def _time_limit(seconds: float, restarted: list[float] | None = None):
    """Interrupt the block after ``seconds`` (a SIGALRM timer: only in the main thread, where a
    notebook's cells run; elsewhere the block runs to the end and the caller checks the time).

    An import is never interrupted: a module stopped half way stays half imported in ``sys.modules``, and every
    later use of it fails ("partially initialized module") until the kernel restarts. When the time is up
    during an import, the timer waits for the import to finish and stops the block right after it — unless the
    block imported torch's compiler (an optimizer ``call`` did not foresee, so did not warm up): then the clock
    restarts, once, with ``seconds`` more, and the time it restarted is appended to ``restarted``."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return
    compiler_before = COMPILER in sys.modules
    restarted = [] if restarted is None else restarted

    def alarm(signum, frame):
        if _importing(frame):
            signal.setitimer(signal.ITIMER_REAL, 0.05)  # look again once the import has had a moment
            return
        if not compiler_before and not restarted and COMPILER in sys.modules:
            restarted.append(time.perf_counter())  # the import was not the learner's code
            signal.setitimer(signal.ITIMER_REAL, seconds)
            return
        raise _TooLong

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def resolve(dotted: str) -> Any:
    """"helpers.softmax.softmax", "torch.Tensor.softmax" or "helpers.ngrams" -> that object (the longest
    importable module prefix, then attributes)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ValueError(f"cannot find {dotted}")


@contextmanager
def _watching(forbid: tuple[str, ...], seen: list[str]):
    """Record which of the ``forbid`` functions run inside the block, under whatever name they were
    called (a profiler sees the function's code, not the name the learner imported it as)."""
    if not forbid:
        yield
        return
    codes, builtins_ = {}, {}
    for dotted in forbid:
        # the function under its decorators (torch.no_grad, a tracer's wrapper): wrappers share one code
        obj = inspect.unwrap(resolve(dotted))
        code = getattr(obj, "__code__", None)
        if code is not None:
            codes[code] = dotted
        else:
            builtins_[id(obj)] = dotted

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            seen.append(codes[frame.f_code])
        elif event == "c_call":
            # x.softmax(0): a new bound method each call, so compare the method it binds
            owner = getattr(arg, "__self__", None)
            method = getattr(type(owner), getattr(arg, "__name__", ""), None) if owner is not None else None
            for candidate in (arg, method):
                if id(candidate) in builtins_:
                    seen.append(builtins_[id(candidate)])
                    break

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)


def call(fn: Callable, *args: Any, what: str, limit: float = LIMIT, forbid: tuple[str, ...] = (),
         hints: dict[str, str] | None = None, may_train: bool = False) -> Any:
    """Call the learner's function; turn a crash or a hang into a short explanation, not a traceback.

    forbid: dotted names of functions that would answer the exercise in one call (the helper it asks the
    learner to write, or torch's own); if the learner's function calls one, the check says so.
    hints: text found in the learner's error -> one sentence naming the usual cause, added to the message (torch's
    "must match the size of tensor b" says what broke, not which habit of the exercise broke it).
    may_train: the function is meant to change the model it is given (a training step). Otherwise a model whose
    weights the function changed and did not restore is put back as it was, and the answer refused: a check must
    not pass an answer that damages the learner's model, nor be fooled by its own model being damaged.
    """
    if not callable(fn):
        raise ExerciseError(f"{what}: the check needs your function itself, but got a {type(fn).__name__}. "
                            "Pass its name without calling it (no parentheses).")
    if _may_optimize(fn, args):
        _warm_up()  # before the clock starts: imports are not the learner's code
    start, seen, restarted, compiler_before = time.perf_counter(), [], [], COMPILER in sys.modules
    given = [(i, a, a.detach().clone()) for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    models = [] if may_train else [(a, {k: v.detach().clone() for k, v in a.state_dict().items()})
                                   for a in args if isinstance(a, torch.nn.Module)]
    try:
        with _time_limit(limit, restarted), _watching(forbid, seen):
            out = fn(*args)
    except NotImplementedError:
        raise NotWrittenYet(f"{what}: not written yet — replace the `raise NotImplementedError()` line "
                            "with your code, run that cell, then run this one.") from None
    except _TooLong:
        raise ExerciseError(f"{what} ran for more than {_seconds(limit)} on a tiny input and was stopped. "
                            "Is there a loop that never ends, or one over every entry of a large tensor?") from None
    except Exception as e:  # the learner's code may raise anything
        _restore(models)
        if seen:  # it called a refused helper, wrongly: the refusal is the message that helps
            raise _refused(what, seen[0]) from None
        said = [hint for key, hint in (hints or {}).items() if key in str(e)]
        raise ExerciseError(" ".join([f"{what} raised {type(e).__name__}: {e}.", *said])) from None
    if _restore(models):
        raise ExerciseError(f"{what} changed the model's weights and did not put them back (for example "
                            "W_O[h] = 0 to switch a head off). The check restored them; switch a head or a neuron "
                            "off only for the one forward pass — inside `with ablated(...)`, a hook, or on a copy "
                            "of the activations — so the model stays as it was for the next question.")
    if seen:
        raise _refused(what, seen[0])
    for i, arg, before in given:
        if arg.shape != before.shape or not torch.equal(arg.detach().nan_to_num(), before.nan_to_num()):
            raise ExerciseError(f"{what} changed {_argument(fn, i)}, a tensor it was given, in place (x -= ..., "
                                "x /= ..., masked_fill_ or x[...] = ... on an input): the caller's tensor changes "
                                "too. Compute a new tensor instead (x = x - ..., masked_fill without the "
                                "underscore, or work on x.clone()).")
    took = time.perf_counter() - start
    if os.environ.get("GT_CHECK_TIMES"):  # the measurement behind LIMIT (tools/busy.py)
        with open(os.environ["GT_CHECK_TIMES"], "a") as log:
            log.write(f"{what}\t{took:.3f}\n")
    # an optimizer's first import of torch's compiler the warm-up did not foresee is not counted: the time up to the
    # clock's restart (or, where no alarm can run, one limit more)
    grace = 0.0 if compiler_before or COMPILER not in sys.modules else (restarted[0] - start if restarted else limit)
    if took > limit + grace:
        raise ExerciseError(f"{what} took more than {_seconds(limit)} on a tiny input. Is there a loop over every "
                            "entry of a large tensor?")
    return out


def _seconds(limit: float) -> str:
    return f"{limit:.0f} s" if limit >= 1 else f"{limit:g} s"


def _refused(what: str, helper: str) -> ExerciseError:
    return ExerciseError(f"{what} calls {helper}, which does the whole exercise in one call. Write the computation "
                         "it hides yourself, step by step.")


def _restore(models: list) -> bool:
    """Put back every model whose weights changed since the snapshot; True if any had."""
    changed = False
    for model, snapshot in models:
        now = model.state_dict()
        if any(not torch.equal(now[k].detach().nan_to_num(), v.nan_to_num()) for k, v in snapshot.items()):
            model.load_state_dict(snapshot)
            changed = True
    return changed


def _argument(fn: Callable, i: int) -> str:
    """The name of ``fn``'s i-th parameter, for a message ("`C`"), or "its argument 2" when it has none."""
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return f"`{names[i]}`"
    except (TypeError, ValueError, IndexError):
        return f"its argument {i + 1}"


def as_tensor(out: Any, what: str) -> torch.Tensor:
    if isinstance(out, torch.Tensor):
        return out
    if out is None:
        raise ExerciseError(f"{what} returned None: is a `return` missing?")
    try:
        return torch.as_tensor(out, dtype=torch.float64)
    except Exception:
        raise ExerciseError(f"{what} should return a tensor, got {type(out).__name__}") from None


def expect_shape(out: torch.Tensor, shape: tuple, what: str, hint: str = "") -> None:
    if tuple(out.shape) != tuple(shape):
        raise ExerciseError(f"{what} has shape {tuple(out.shape)}, expected {tuple(shape)}. {hint}".strip())


def expect_real(out: torch.Tensor, what: str, hint: str = "") -> torch.Tensor:
    """A floating-point tensor with no NaN or infinity (returned as float64 for comparing)."""
    if out.dtype == torch.bool or out.is_complex():
        raise ExerciseError(f"{what} has dtype {out.dtype}; expected real numbers (float).")
    if not out.is_floating_point():
        raise ExerciseError(f"{what} has dtype {out.dtype}: integer division or rounding threw the fractions "
                            "away. Keep the numbers as floats.")
    if torch.isnan(out).any():
        raise ExerciseError(f"{what} contains NaN (0/0, inf - inf or log of a negative number). {hint}".strip())
    if torch.isinf(out).any():
        raise ExerciseError(f"{what} contains infinity (an overflow, or a division by zero). {hint}".strip())
    return out.double()


def tensor_result(out: Any, shape: tuple, what: str, hint: str = "") -> torch.Tensor:
    """The usual checks on a returned tensor, in the order a learner can act on them: a tensor, of the
    right shape, of real finite numbers. Returns it as float64."""
    out = as_tensor(out, what)
    expect_shape(out, shape, what, hint)
    return expect_real(out, what)


def number_result(out: Any, what: str) -> float:
    """A returned Python number or one-element tensor, as a float (NaN and infinity explained)."""
    if isinstance(out, torch.Tensor):
        if out.numel() != 1:
            raise ExerciseError(f"{what} should be one number, got a tensor of shape {tuple(out.shape)}.")
        out = out.item()
    elif type(out).__module__ == "numpy":  # a numpy number (np.float32(3.1)) or array (np.array(3.1))
        if getattr(out, "size", 1) != 1:
            raise ExerciseError(f"{what} should be one number, got an array of shape {tuple(out.shape)}.")
        out = out.item()
    if isinstance(out, bool) or not isinstance(out, (int, float)):
        raise ExerciseError(f"{what} should be a number, got {type(out).__name__}.")
    if math.isnan(out) or math.isinf(out):
        raise ExerciseError(f"{what} is {out}: a division by zero or a log of 0 somewhere?")
    return float(out)


def close(a: torch.Tensor, b: torch.Tensor, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
    """Same shape and the same numbers up to rounding, compared in float64: every comparison inside a check goes
    through here, so a right answer in float64 (or float16, or from a list or a numpy array, which ``as_tensor``
    makes float64) is compared like one in float32, never refused by torch for its dtype."""
    a, b = torch.as_tensor(a), torch.as_tensor(b)
    return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), atol=atol, rtol=rtol))


def passed(message: str) -> bool:
    print(f"✔ {message}")
    return True

