"""Progress bars for the series' training loops: tqdm's, except that a loop which stops early on purpose ends green.

Not part of the post: a convenience for the notebooks that train. tqdm (a well-kept library; we only adjust how it
ends) shows a bar that is closed short of its total as an error — red in a notebook. The induction-head trainer
stops as soon as the heads have formed, well before its step budget, and that is success, not failure. This bar,
closed after its loop stopped early, shrinks its total to the steps actually taken and says so in its description.
An exception or an interrupt inside the loop still turns it red (tqdm handles those before ``close``).
"""

from __future__ import annotations

from tqdm.auto import tqdm as _tqdm


class EndsGreen:
    """Mixed into a tqdm class: an explicit ``close()`` after an early ``break`` ends as finished, not as broken.

    tqdm's own iterator marks a notebook bar red as soon as the loop is left early (it cannot tell a ``break``
    from an exception), so this one counts the steps itself. A loop left by an exception never reaches the
    trainer's ``close()``: the garbage collector closes the bar later, short of its total, and tqdm shows it red.
    """

    def __iter__(self):
        self.taken, self.by_owner = 0, True
        if self.disable:
            yield from self.iterable
            return
        for item in self.iterable:
            self.taken += 1
            yield item
            self.update(1)

    def close(self) -> None:
        if not self.disable and getattr(self, "by_owner", False) and self.total and self.taken < self.total:
            planned, taken = self.total, self.taken  # (by_owner: our __iter__ ran, so taken is set)
            self.n = self.total = taken
            container = getattr(self, "container", None)  # tqdm.notebook's widget: label, bar, label
            if container is not None:
                container.children[1].max = taken
            self.set_description_str(f"{self.desc} (stopped at step {taken} of {planned}: done)", refresh=False)
        super().close()

    def __del__(self):
        self.by_owner = False  # closed by the garbage collector: the loop ended some other way
        super().__del__()


class tqdm(EndsGreen, _tqdm):  # a drop-in for tqdm.auto.tqdm, so it keeps the name
    """``tqdm.auto.tqdm`` (a widget in a notebook, text elsewhere) that ends green when its loop stops early."""
