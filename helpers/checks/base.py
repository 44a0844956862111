"""What every exercise check shares: calling the learner's function safely, and one error type."""

from __future__ import annotations

from typing import Any, Callable

import torch


class ExerciseError(AssertionError):
    """The learner's answer is not right yet; the message says why and what to try."""


def call(fn: Callable, *args: Any, what: str) -> Any:
    """Call the learner's function; turn a crash into a short explanation instead of a traceback."""
    try:
        return fn(*args)
    except NotImplementedError:
        raise ExerciseError(f"{what}: not written yet — replace the `raise NotImplementedError` line.") from None
    except Exception as e:  # the learner's code may raise anything
        raise ExerciseError(f"{what} raised {type(e).__name__}: {e}") from None


def as_tensor(out: Any, what: str) -> torch.Tensor:
    if isinstance(out, torch.Tensor):
        return out
    try:
        return torch.as_tensor(out, dtype=torch.float64)
    except Exception:
        raise ExerciseError(f"{what} should return a tensor, got {type(out).__name__}") from None


def expect_shape(out: torch.Tensor, shape: tuple, what: str, hint: str = "") -> None:
    if tuple(out.shape) != tuple(shape):
        raise ExerciseError(f"{what} has shape {tuple(out.shape)}, expected {tuple(shape)}. {hint}".strip())


def passed(message: str) -> bool:
    print(f"✔ {message}")
    return True
