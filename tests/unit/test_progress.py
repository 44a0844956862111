"""helpers.progress: a training loop that stops early on purpose ends its bar as finished (green), not red.

tqdm's notebook bar turns red ("danger") when it is closed short of its total; notebooks 09 and 10 stop training as
soon as the induction heads form, so their bars used to end red in a clean run."""

import gc
import io

import pytest
from tqdm.notebook import tqdm as notebook_tqdm

import helpers.lessons.induction
from helpers.progress import EndsGreen, tqdm


def run(bar, stop_at=None):
    for step in bar:
        if step == stop_at:
            break
    bar.close()
    return bar


def test_text_bar_stopped_early_shrinks_to_the_steps_taken():
    out = io.StringIO()
    bar = run(tqdm(range(1, 101), desc="training", file=out, mininterval=0), stop_at=37)
    assert bar.n == bar.total == 37
    assert "training (stopped at step 37 of 100: done)" in out.getvalue().splitlines()[-1] or \
        "stopped at step 37 of 100" in out.getvalue()


def test_text_bar_run_to_the_end_is_unchanged():
    out = io.StringIO()
    bar = run(tqdm(range(1, 6), desc="training", file=out, mininterval=0))
    assert bar.n == bar.total == 5 and "stopped" not in out.getvalue()


class NotebookBar(EndsGreen, notebook_tqdm):
    """What tqdm.auto gives inside a Jupyter kernel, with the series' ending."""


@pytest.mark.filterwarnings("ignore")  # tqdm.notebook warns outside a kernel; the widget is built all the same
def test_notebook_bar_stopped_early_ends_green_and_full():
    bar = run(NotebookBar(range(1, 1501), desc="training", mininterval=0), stop_at=449)
    _, widget, _ = bar.container.children
    assert widget.bar_style == "success" and widget.max == 449 and bar.n == 449


@pytest.mark.filterwarnings("ignore")
def test_negative_control_plain_notebook_bar_stopped_early_ends_red():
    bar = run(notebook_tqdm(range(1, 1501), desc="training", mininterval=0), stop_at=449)
    assert bar.container.children[1].bar_style == "danger"


@pytest.mark.filterwarnings("ignore")
def test_an_error_inside_the_loop_still_ends_red():
    bar = NotebookBar(range(1, 1501), desc="training", mininterval=0)
    with pytest.raises(RuntimeError):
        for step in bar:
            if step == 10:
                raise RuntimeError("boom")
    widget = bar.container.children[1]
    assert widget.bar_style != "success"          # the trainer never reached its close()
    del bar
    gc.collect()                                  # the garbage collector closes it, short of its total
    assert widget.bar_style == "danger"


def test_the_induction_trainer_uses_it():
    assert helpers.lessons.induction.tqdm is tqdm
