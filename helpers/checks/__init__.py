"""Auto-checked exercises: ``check_<exercise>(fn)`` runs a learner's function on test inputs and
explains the most likely mistake in the post's terms. Nothing else in ``helpers`` imports this.

Each ``check_*`` returns True when the answer is right and raises ``ExerciseError`` (with a
message, never a deep torch traceback) when it is not.

ngrams.py   notebook 01: normalising bigram counts
softmax.py  notebook 02: a numerically stable softmax
attention.py  notebooks 03-05: single-query attention, the causal softmax*, multi-head output
"""

from helpers.checks.base import ExerciseError  # noqa: F401
