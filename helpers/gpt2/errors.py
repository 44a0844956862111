"""The two things that can go wrong with GPT-2's files, each said in one sentence (in Jupyter too, without a
traceback): they are not here and cannot be fetched now, or they are here but cannot be used."""

from __future__ import annotations


class _OneSentence(Exception):
    def _render_traceback_(self) -> list[str]:  # in Jupyter: the sentence alone, not a traceback
        return [f"\x1b[0;33m{type(self).__name__}\x1b[0m: {self}"]


class GPT2Unavailable(_OneSentence, RuntimeError):
    """GPT-2's files are not on this machine and cannot be fetched now (offline, or the Hub unreachable)."""


class GPT2FileError(_OneSentence, ValueError):
    """A GPT-2 file is there but cannot be used: damaged, incomplete, or not GPT-2's layout."""

