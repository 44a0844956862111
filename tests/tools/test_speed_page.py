"""docs/speed.md's table of run times and memory, which `bash run.sh bench --no-browser --write` writes: a row per
notebook, each with when and where it was measured, and the series' total the rows add up to."""

from __future__ import annotations

import re
import shutil

from helpers import series
from tools import bench


def rows(text: str) -> dict[str, list[str]]:
    return {m[1]: [c.strip() for c in m[0].strip("|").split("|")][1:] for m in
            re.finditer(r"^\| (\d\d_\w+) \| .*\|$", text, re.M)}


def test_every_notebook_has_its_row_with_a_day_and_the_total_adds_up():
    text = bench.SPEED_PAGE.read_text(encoding="utf-8")
    found = rows(text)
    assert sorted(found) == [nb.name for nb in series.notebooks()]
    for name, (run, peak, measured) in found.items():
        assert re.fullmatch(r"[\d.]+ s", run) and re.fullmatch(r"\d+ MB", peak), (name, run, peak)
        assert re.match(r"20\d\d-\d\d-\d\d, ", measured), f"{name}: the row says when it was measured"
    total = float(re.search(r"^\| the series \(the rows added up\) \| ([\d.]+) s \|", text, re.M)[1])
    assert round(sum(float(run.removesuffix(" s")) for run, _, _ in found.values()), 1) == total


def test_write_replaces_the_rows_run_adds_a_new_one_and_keeps_the_rest(tmp_path):
    page = tmp_path / "speed.md"
    shutil.copy(bench.SPEED_PAGE, page)
    before = rows(page.read_text(encoding="utf-8"))
    runs = [{"notebook": "02_zero_layer", "error": "", "run_s": 12.34, "rss_mb": 401.2},
            {"notebook": "99_new", "error": "", "run_s": 3.0, "rss_mb": 300.0},
            {"notebook": "07_layernorm", "error": "NameError: x", "run_s": 0.5, "rss_mb": 100.0}]
    bench.write_speed_page(runs, "2030-01-02, 2 cores of a test CPU, load 0.5", page)
    text = page.read_text(encoding="utf-8")
    after = rows(text)
    assert after["02_zero_layer"] == ["12.3 s", "401 MB", "2030-01-02, 2 cores of a test CPU, load 0.5"]
    assert after["99_new"][0] == "3.0 s" and list(after)[-1] == "99_new"
    assert after["07_layernorm"] == before["07_layernorm"], "a failed run leaves its row alone"
    assert {k: v for k, v in after.items() if k not in ("02_zero_layer", "99_new")} == \
        {k: v for k, v in before.items() if k != "02_zero_layer"}
    assert text.split(bench.SPEED_MARKS[1])[1] == bench.SPEED_PAGE.read_text(encoding="utf-8").split(
        bench.SPEED_MARKS[1])[1], "the page around the table is kept"


def test_the_machine_says_the_day_the_cores_and_the_load():
    said = bench.machine(1.23, 2.71)
    assert re.fullmatch(r"20\d\d-\d\d-\d\d, \d+ cores of .+, load 1\.2–2\.7", said), said
    assert bench.machine(0.51, 0.49).endswith("load 0.5")
