"""The course site (``bash run.sh site``, tools/site.py), built once for this file and read as a reader's browser reads
it: headless Chromium from the file system (file://) and from a static server on 127.0.0.1.

Checked: every page loads with its styles and scripts and no error; every internal link and anchor resolves; every
image carries its text alternative; axe-core finds no violation of moderate impact or worse; every page fits a phone's
390 px; from the keyboard every tab stop has a name and shows its focus; MathJax typesets the math from the site's own
copy; each explorer shows the picture it drew, with its caption and how to move it live; the exercises are blank with
the series' answers folded (closed), and no shipped file holds an answer outside its fold; nothing but what a reader
needs is shipped (no build cache or template), with a favicon; search finds a page; the landing page quotes README;
nothing is fetched from the network (the build ran under the suite's offline guard, the browser has a dead proxy).
Negative controls show that the link, alt, axe, width, keyboard, math, answer and shipping checks can fail.

Skips at once, with the reason, when the site's tools are not installed (``bash run.sh test`` installs them: Sphinx
&c. in .venv-site, MathJax in site/node_modules) or Chromium is missing. While working on these tests,
GT_SITE_BUILT=build reuses the build `bash run.sh site` left in build/ (the suite always builds afresh)."""

from __future__ import annotations

import functools
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tools import site
from tools.cloud import binder_url, colab_url, repository

pytestmark = pytest.mark.slow  # the course site: every learner copy executed, Sphinx, the pages in Chromium

ROOT = Path(__file__).resolve().parents[2]
SITE_VENV = Path(os.environ.get("GT_SITE_VENV") or ROOT / ".venv-site")
SPHINX = SITE_VENV / "bin" / "sphinx-build"
NOTEBOOKS = [p.stem for p in sorted((ROOT / "learn").glob("*.ipynb"))]


def _tools_problem() -> str | None:
    if not SPHINX.is_file():
        return f"the course site's tools are not installed ({SPHINX} missing): bash run.sh site (or test) installs them"
    if not (site.MATHJAX / "tex-svg.js").is_file():
        return "MathJax is not installed in site/node_modules: bash run.sh site (or test) runs npm ci there"
    return None


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The whole site, built once (every learner copy executed, one torch thread), in a temporary folder."""
    problem = _tools_problem()
    if problem:
        pytest.skip(problem)
    if os.environ.get("GT_SITE_BUILT"):  # while working on these tests: a build of `bash run.sh site`, reused
        out = Path(os.environ["GT_SITE_BUILT"]).resolve()
        return {"out": out / "site", "src": out / "site-src", "times": {"total": 0}}
    tmp = tmp_path_factory.mktemp("site")
    os.environ.setdefault("GT_THREADS", "1")
    start = time.perf_counter()
    times = site.build(tmp / "site", tmp / "src", SPHINX, log=lambda *_: None)
    times["total"] = round(time.perf_counter() - start, 1)
    print(f"\nthe course site built in {times['total']} s: {json.dumps(times)}")
    return {"out": tmp / "site", "src": tmp / "src", "times": times}


def pages(out: Path) -> list[Path]:
    return sorted(p for p in out.glob("*.html"))


# --- reading the HTML without a browser ---------------------------------------------------------------------------
class Page(HTMLParser):
    """The links, ids, images and text of one page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []  # (attribute, value): href and src
        self.ids: set[str] = set()
        self.imgs: list[dict] = []
        self.svgs: list[dict] = []
        self.text: list[str] = []
        self._details = 0
        self.outside_details: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.links.append((key, a[key]))
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "img":
            self.imgs.append(a)
        if tag == "svg":
            self.svgs.append(a)
        if tag == "details":
            self._details += 1
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag == "details":
            self._details -= 1
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if self._skip:
            return
        self.text.append(data)
        if not self._details:
            self.outside_details.append(data)


@functools.lru_cache(maxsize=None)
def parsed(path: Path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def words(text: str) -> str:
    """Text with its white space collapsed and Sphinx's typographic quotes made plain again."""
    text = text.translate(str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"}))
    return re.sub(r"\s+", " ", text).strip()


def broken_links(out: Path) -> list[str]:
    """Every internal href/src of every page that names a missing file or a missing anchor."""
    problems = []
    for page in pages(out):
        for key, value in parsed(page).links:
            url = urlsplit(value)
            if url.scheme in ("http", "https", "mailto", "data", "javascript") or value.startswith("//"):
                continue
            target = (page.parent / unquote(url.path)).resolve() if url.path else page
            if not target.exists():
                problems.append(f"{page.name}: {key}={value} -> no such file")
            elif url.fragment and target.suffix == ".html" and unquote(url.fragment) not in parsed(target).ids:
                problems.append(f"{page.name}: {key}={value} -> no id {url.fragment!r} in {target.name}")
    return problems


def missing_alt(out: Path) -> list[str]:
    """Images without a text alternative: <img> without alt words, <svg> pictures without a title, label or
    description (an svg marked aria-hidden is decoration)."""
    problems = []
    for page in pages(out):
        for img in parsed(page).imgs:
            if not (img.get("alt") or "").strip() and img.get("role") != "presentation":
                problems.append(f"{page.name}: <img src={img.get('src', '')[:60]!r}> has no alt")
    return problems


# --- the build itself ---------------------------------------------------------------------------------------------
def test_build_has_a_page_per_notebook_in_series_order(built):
    out = built["out"]
    for name in NOTEBOOKS:
        assert (out / f"{name}.html").is_file(), name
    index = (out / "index.html").read_text(encoding="utf-8")
    # the navigation lists the notebooks in the series' order
    positions = [index.find(f'href="{name}.html"') for name in NOTEBOOKS]
    assert all(p > 0 for p in positions) and positions == sorted(positions), positions
    assert (out / "search.html").is_file() and (out / "searchindex.js").is_file()
    assert built["times"]["total"] < 900, built["times"]


def test_the_docs_pages_follow_the_notebooks(built):
    """The pages of docs/ (tools/site.py's DOC_PAGES) are built, listed in the navigation after the notebooks, with
    their own titles; a link to a file of the repository goes to the repository, not to a page that is not there."""
    out = built["out"]
    index = (out / "index.html").read_text(encoding="utf-8")
    last_notebook = max(index.find(f'href="{name}.html"') for name in NOTEBOOKS)
    positions = [index.find(f'href="{name}.html"') for name in site.DOC_PAGES]
    assert all(p > last_notebook for p in positions) and positions == sorted(positions), positions
    for name in site.DOC_PAGES:
        title = (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")
        assert title in "".join(parsed(out / f"{name}.html").text), (name, title)
    repo, ref = repository()
    links = [value for _, value in parsed(out / "testing.html").links]
    assert f"https://github.com/{repo}/blob/{ref}/docs/margins.md" in links


def test_build_ran_offline(built):
    """The build ran under the suite's offline guard: this process, the kernels and sphinx-build (whose Python loads
    the guard from PYTHONPATH too) could not have fetched anything; the guard is real in the site's Python."""
    assert os.environ.get("GT_OFFLINE") == "1"
    probe = ("import socket\ntry:\n    socket.create_connection(('93.184.216.34', 80), timeout=3)\n"
             "    print('connected')\nexcept OSError as e:\n    print('refused', e)")
    result = subprocess.run([str(SITE_VENV / "bin" / "python"), "-c", probe], capture_output=True, text=True,
                            env=os.environ.copy(), timeout=60)
    assert result.stdout.startswith("refused"), result.stdout + result.stderr


def test_nothing_fetched_from_the_network(built):
    """No page names a script, stylesheet, image or font on another host, nor a widget manager, require.js or a
    MathJax CDN; links to Binder, Colab and the repository are links, not resources."""
    out = built["out"]
    remote = re.compile(r"""<(script|link|img|iframe|source|embed|object)\b[^>]*>""", re.I)
    for page in pages(out):
        text = page.read_text(encoding="utf-8")
        for m in remote.finditer(text):
            tag = m[0]
            if not re.search(r"""\b(src|href|data)=["'](https?:)?//""", tag):
                continue
            rel = re.search(r"""\brel=["']([^"']*)""", tag)
            fetched = m[1].lower() != "link" or (rel and re.search(r"stylesheet|preload|icon|modulepreload", rel[1]))
            assert not fetched, f"{page.name} fetches {tag}"
        for word in ("require.js", "requirejs", "cdn.jsdelivr", "unpkg.com", "cdnjs", "html-manager",
                     "application/vnd.jupyter.widget"):
            assert word not in text, f"{page.name} names {word}"
    for css in (out / "_static").rglob("*.css"):
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", css.read_text(encoding="utf-8", errors="replace")), css


def test_internal_links_resolve(built):
    assert broken_links(built["out"]) == []


def test_images_have_text_alternatives(built):
    out = built["out"]
    assert missing_alt(out) == []
    # the figures carry their data in words (helpers/plots): every notebook figure's alt holds a number
    figures = [img for page in pages(out) for img in parsed(page).imgs if "_images/" in img.get("src", "")
               or img.get("src", "").startswith("data:")]
    assert figures, "no figures found"
    for img in figures:
        if "model_map" not in img.get("src", ""):
            assert re.search(r"\d", img["alt"]), img["alt"][:200]


def test_negative_controls_links_and_alt(built, tmp_path):
    """A broken link, a missing anchor and an image without alt, planted in a copy, are each named."""
    copy = tmp_path / "copy"
    shutil.copytree(built["out"], copy, ignore=shutil.ignore_patterns("_static", "_images"))
    page = copy / f"{NOTEBOOKS[0]}.html"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("</body>", '<a href="nowhere.html">x</a><a href="index.html#no-such-id">y</a>'
                                 '<img src="index.html"></body>'), encoding="utf-8")
    parsed.cache_clear()
    try:
        found = broken_links(copy)
        assert any("nowhere.html" in f for f in found) and any("no-such-id" in f for f in found), found
        assert any("has no alt" in f for f in missing_alt(copy))
    finally:
        parsed.cache_clear()


def test_landing_page_quotes_readme(built):
    """The promise, who it is for, the model map with README's text alternative, the notebooks' table and the
    learner-time estimate: README's words on the landing page (tools/site.py quotes them at build time)."""
    readme = site.README.read_text(encoding="utf-8")
    index = parsed(built["out"] / "index.html")
    text = words("".join(index.text))

    def plain(markdown: str) -> str:
        markdown = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
        return words(markdown.replace("**", "").replace("`", "").replace("*", ""))

    promise = plain(site.promise(readme))
    learner_time = plain(site.readme_section(readme, "### Learner time"))
    for sentence in re.split(r"(?<=[.:])\s+", promise + " " + learner_time):
        assert sentence in text, sentence
    # (the estimate, as README gives it)
    assert "For whom:" in text and re.search(r"\b\d+(\.\d)? hours for 01–05", text)
    map_alt = re.search(r"!\[([^\]]*)\]\(docs/model_map\.svg\)", readme)[1]
    assert any(img.get("alt") == map_alt and img.get("src", "").endswith("model_map.svg") for img in index.imgs)
    for name in NOTEBOOKS:  # the table's rows link to the pages
        assert ("href", f"{name}.html") in index.links, name


def explorer_problems(name: str, text: str, want: int) -> list[str]:
    """What is wrong with the static explorers of page ``name`` (its HTML ``text``; ``want`` of them expected): each
    must show its picture (a gt-view with content), its caption (the picture's words, with the id the picture's
    aria-describedby names), the values it was drawn for, and the line with Binder and Colab; no widget may be left
    as its text form (``VBox(children=...``)."""
    repo, ref = repository()
    problems = []
    blocks = re.findall(r'<div class="gt-static-explorer">(.*?)<p class="gt-live">(.*?)</p>', text, re.S)
    if len(blocks) != want:
        problems.append(f"{name}: {len(blocks)} explorers, not {want}")
    if re.search(r"\b(VBox|HBox)\(children=", text):
        problems.append(f"{name}: a widget shown as its text form")
    for body, live in blocks:
        caption = re.search(r'class="gt-caption[^"]*"[^>]*id="([^"]+)"', body)
        view = re.search(r'<div class="gt-view"[^>]*>(.*)', body, re.S)
        if not caption or f'aria-describedby="{caption[1]}"' not in body:
            problems.append(f"{name}: an explorer without its caption tied to the picture")
        if not view or len(re.sub(r"<[^>]+>", "", view[1])) < 20 and view[1].count("<") < 20:
            problems.append(f"{name}: an explorer without its picture")
        if "Explorer, as drawn for:" not in body:
            problems.append(f"{name}: an explorer without the values it was drawn for")
        if (html.escape(binder_url(repo, ref, f"{name}.ipynb")) not in live
                or html.escape(colab_url(repo, ref, f"{name}.ipynb")) not in live or "bash run.sh lab" not in live):
            problems.append(f"{name}: an explorer without the line on moving it live")
    return problems


def test_explorers_are_static_pictures_with_a_live_line(built):
    total, problems = 0, []
    for name in NOTEBOOKS:
        want = (built["src"] / f"{name}.ipynb").read_text(encoding="utf-8").count('class=\\"gt-static-explorer\\"')
        problems += explorer_problems(name, (built["out"] / f"{name}.html").read_text(encoding="utf-8"), want)
        total += want
    assert problems == []
    assert total >= 15, total  # the series has about two explorers a notebook


def test_negative_control_explorers(built):
    """An explorer whose picture is empty, whose live line is gone, or a widget left as text: each is named."""
    text = (built["out"] / "04_attention_matrix.html").read_text(encoding="utf-8")
    want = text.count('<div class="gt-static-explorer">')
    assert explorer_problems("04_attention_matrix", text, want) == []
    empty = re.sub(r'(<div class="gt-view"[^>]*>).*?(<p class="gt-live">)', r"\1</div>\2", text, count=1, flags=re.S)
    assert any("without its picture" in p for p in explorer_problems("04_attention_matrix", empty, want))
    no_line = re.sub(r'<p class="gt-live">.*?</p>', '<p class="gt-live"></p>', text, count=1, flags=re.S)
    assert any("moving it live" in p for p in explorer_problems("04_attention_matrix", no_line, want))
    as_text = text.replace("</body>", "<pre>VBox(children=(HBox(children=(IntSlider(</pre></body>")
    assert any("text form" in p for p in explorer_problems("04_attention_matrix", as_text, want))


def test_exercises_blank_with_answers_folded(built):
    """Each exercise is the learner's form (``raise NotImplementedError()``, its check saying "not written yet")
    and the series' answer is on the page only inside a closed <details>."""
    from helpers.checks.solutions import SOLUTIONS

    for number, s in SOLUTIONS.items():
        page = built["out"] / s["notebook"].replace(".ipynb", ".html")
        learner = json.loads((ROOT / "learn" / s["notebook"]).read_text(encoding="utf-8"))
        learner_text = words(" ".join("".join(c["source"]) for c in learner["cells"]))
        raw = page.read_text(encoding="utf-8")
        outside = words("".join(parsed(page).outside_details))
        assert "NotImplementedError" in outside and "not written yet" in outside, page.name
        folded = re.findall(r"<details class=\"gt-answer\"( open)?>(.*?)</details>", raw, re.S)
        mine = [body for is_open, body in folded if f"exercise {number} ·" in body]
        assert len(mine) == 1, (number, len(mine))
        assert not any(is_open for is_open, _ in folded), f"{page.name}: an answer is open"
        body = words(html.unescape(re.sub(r"<[^>]+>", " ", mine[0])))
        for line in s["code"].splitlines():
            line = words(line.split("  #")[0])
            if len(line) > 25 and not line.startswith(("def ", "return ")):
                assert line in body, (number, line)
                if line not in learner_text:  # (a line the learner copy itself holds, in prose or code, is no leak)
                    assert line not in outside, f"exercise {number}'s answer shows outside the fold: {line}"


def test_negative_control_an_open_answer_is_caught(built, tmp_path):
    """The fold check fails on a page whose answer is open or written out."""
    from helpers.checks.solutions import SOLUTIONS

    s = SOLUTIONS["1.1"]
    raw = (built["out"] / "01_bigrams.html").read_text(encoding="utf-8")
    doctored = raw.replace('<details class="gt-answer">', '<details class="gt-answer" open>', 1)
    assert re.search(r"<details class=\"gt-answer\"( open)>", doctored)
    line = s["code"].splitlines()[1].split("  #")[0].strip()
    leaked = tmp_path / "leaked.html"
    leaked.write_text(raw.replace("</body>", f"<pre>{html.escape(line)}</pre></body>"), encoding="utf-8")
    p = Page()
    p.feed(leaked.read_text(encoding="utf-8"))
    assert words(line) in words("".join(p.outside_details))


def not_for_readers(out: Path) -> list[str]:
    """What the built site holds that no reader needs: Sphinx's cache (.doctrees) and build record (.buildinfo), the
    themes' unrendered template files (Jinja in an .html file), an empty folder."""
    found = [str(p.relative_to(out)) for p in out.rglob("*") if p.name in (".doctrees", ".buildinfo")]
    found += [str(p.relative_to(out)) for p in out.rglob("*.html")
              if "{%" in p.read_text(encoding="utf-8", errors="replace")]
    found += [str(p.relative_to(out)) for p in out.rglob("*") if p.is_dir() and not any(p.iterdir())]
    return found


CLOSED_FOLD = re.compile(r"<details\b(?![^>]*\bopen\b)[^>]*>.*?</details>", re.S)


@functools.lru_cache(maxsize=1)
def answer_lines() -> tuple[tuple[str, str], ...]:
    """(exercise, line) for each telling line of the series' answers: longer than 25 characters, not a def or return
    line, and held by no learner copy (the pages show the learner copies)."""
    from helpers.checks.solutions import SOLUTIONS

    learner = " ".join(words(" ".join("".join(c["source"]) for c in json.loads(p.read_text(encoding="utf-8"))["cells"]))
                       for p in sorted((ROOT / "learn").glob("*.ipynb")))
    lines = []
    for number, s in SOLUTIONS.items():
        for line in s["code"].splitlines():
            line = line.split("  #")[0].strip()
            if len(line) > 25 and not line.startswith(("def ", "return ")) and words(line) not in learner:
                lines.append((number, line))
    return tuple(lines)


def answers_outside_folds(out: Path) -> list[str]:
    """Every shipped file that holds one of the ``answer_lines`` outside a closed <details>: a page's text and markup
    with its closed folds taken out; any other file (scripts, the search index, data, images) whole, since only a page
    can fold anything."""
    lines = answer_lines()
    found = []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        raw = path.read_bytes().decode("utf-8", errors="replace")
        if path.suffix == ".html":
            page = Page()
            page.feed(CLOSED_FOLD.sub("", raw))
            texts = [CLOSED_FOLD.sub("", raw), words("".join(page.outside_details))]
        else:
            texts = [raw]
        texts += [html.unescape(texts[0]), texts[0].replace('\\"', '"')]
        for number, line in lines:
            if any(needle in t for t in texts for needle in {line, words(line)}):
                found.append(f"{path.relative_to(out)}: exercise {number}'s answer: {line}")
    return found


def test_only_what_a_reader_needs_is_shipped(built):
    """No build cache, build record, template file or empty folder in the site (the cache held every answer)."""
    out = built["out"]
    assert not_for_readers(out) == []
    assert not (out / ".doctrees").exists() and not (out / ".buildinfo").exists()


def test_no_answer_outside_its_fold_in_any_shipped_file(built):
    found = answers_outside_folds(built["out"])
    assert found == [], found[:10]


def test_negative_control_what_is_not_for_readers_is_caught(built, tmp_path):
    """A Sphinx cache holding an answer, a build record, a theme's template and an empty folder, planted in a copy of
    the site, are each named; so is an answer in a script, or in a page outside its fold."""
    copy = tmp_path / "copy"
    shutil.copytree(built["out"], copy, ignore=shutil.ignore_patterns("mathjax", "_images"))
    line = next(line for _, line in answer_lines() if '"' in line)  # (one that a page, a script, the cache escape)
    (copy / ".doctrees").mkdir()
    (copy / ".doctrees" / "04_attention_matrix.doctree").write_bytes(b"\x80\x04" + html.escape(line).encode())
    (copy / ".buildinfo").write_text("# Sphinx build info version 1\n")
    (copy / "_static" / "webpack-macros.html").write_text("{% macro head_pre_assets() %}{% endmacro %}")
    (copy / "_sources").mkdir(exist_ok=True)
    (copy / "_static" / "leak.js").write_text(f"var x = {json.dumps(line)};")
    page = copy / "01_bigrams.html"
    page.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", f'<p>{html.escape(line)}</p><details class="gt-answer" open>{html.escape(line)}</details></body>'),
        encoding="utf-8")
    assert set(not_for_readers(copy)) >= {".doctrees", ".buildinfo", "_static/webpack-macros.html", "_sources"}
    found = answers_outside_folds(copy)
    for name in (".doctrees/04_attention_matrix.doctree", "_static/leak.js", "01_bigrams.html"):
        assert any(f.startswith(name + ":") for f in found), (name, found)


# --- in the browser -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def chromium(built):
    from tools.jlab.browser import browser, chromium_problem

    problem = chromium_problem()
    if problem:
        pytest.skip(problem)
    with browser() as ctx:
        yield ctx


@pytest.fixture(scope="module")
def served(built):
    """The built site on a static server on 127.0.0.1 (the standard library's), stopped at the end."""
    handler = functools.partial(_Quiet, directory=str(built["out"]))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _open(ctx, url: str, viewport: dict | None = None):
    """A page at ``url`` once loaded and MathJax is done: (page, errors: scripts' errors and failed requests), in
    ``viewport`` (width and height) if given."""
    page = ctx.new_page()
    if viewport:
        page.set_viewport_size(viewport)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(f"error: {e}"))
    page.on("requestfailed", lambda r: errors.append(f"failed: {r.url} {r.failure}"))
    page.on("response", lambda r: r.status >= 400 and errors.append(f"HTTP {r.status}: {r.url}"))
    page.goto(url, wait_until="load")
    page.evaluate("() => (window.MathJax && MathJax.startup && MathJax.startup.promise)"
                  " ? MathJax.startup.promise.then(() => true) : true")
    return page, errors


def _loaded(page) -> list[str]:
    """What a loaded page lacks: stylesheets that did not apply, a missing main heading."""
    return page.evaluate("""() => {
        const out = [];
        for (const l of document.querySelectorAll('link[rel=stylesheet]')) if (!l.sheet) out.push('css ' + l.href);
        if (!document.querySelector('main h1, article h1, h1')) out.push('no h1');
        return out; }""")


@pytest.mark.parametrize("origin", ["file", "server"])
def test_every_page_loads(built, chromium, served, origin):
    for path in pages(built["out"]):
        url = path.as_uri() if origin == "file" else served + path.name
        page, errors = _open(chromium, url)
        try:
            # a preload the browser dropped after the stylesheet itself loaded is no failure
            errors = [e for e in errors if "ERR_ABORTED" not in e]
            assert errors == [] and _loaded(page) == [], (path.name, errors, _loaded(page))
        finally:
            page.close()


def test_negative_control_a_page_that_does_not_load(built, chromium, tmp_path):
    """A stylesheet and a script that are missing, planted in a copy of a page, are both caught."""
    copy = tmp_path / "copy"
    shutil.copytree(built["out"], copy)
    page_file = copy / "index.html"
    text = page_file.read_text(encoding="utf-8")
    page_file.write_text(text.replace("</head>", '<link rel="stylesheet" href="_static/missing.css">'
                                      '<script src="_static/missing.js"></script></head>'), encoding="utf-8")
    page, errors = _open(chromium, page_file.as_uri())
    try:
        assert any("missing.css" in e for e in errors) and any("missing.js" in e for e in errors), errors
    finally:
        page.close()


# Colour contrast is axe's slowest rule by far (23 of 31 s on notebook 10's page on a loaded 2-core machine). It runs
# on the pages that hold every kind of thing the site adds (the theme around a page, the landing page and search, code
# cells, a check's output, the folded answers, the static explorers, MathJax, a page of docs/); the notebooks' outputs
# themselves are also audited with it in JupyterLab (tests/browser) and their colours are checked by
# tests/unit/plots/test_palette.py. Every other rule runs on every page.
CONTRAST_PAGES = {"index.html", "search.html", "01_bigrams.html", "04_attention_matrix.html",
                  "10_circuits_and_cost.html", "teaching.html"}


def _axe(page, contrast: bool = True) -> list[str]:
    from axe_playwright_python.base import AXE_SCRIPT

    page.evaluate(AXE_SCRIPT)
    options = {"resultTypes": ["violations"]} | ({} if contrast else {"rules": {"color-contrast": {"enabled": False}}})
    result = page.evaluate("(options) => axe.run(document, options)", options)
    return [f"{v['impact']}: {v['id']} x{len(v['nodes'])} ({v['help']}; e.g. {v['nodes'][0]['target']})"
            for v in result["violations"] if v["impact"] in ("critical", "serious", "moderate")]


def test_axe_nothing_moderate_or_worse(built, chromium):
    found = {}
    for path in pages(built["out"]):
        page, _ = _open(chromium, path.as_uri())
        try:
            serious = _axe(page, contrast=path.name in CONTRAST_PAGES)
            if serious:
                found[path.name] = serious
        finally:
            page.close()
    assert found == {}, json.dumps(found, indent=1)


def test_axe_negative_control(built, chromium):
    page, _ = _open(chromium, (built["out"] / "index.html").as_uri())
    try:
        page.evaluate("() => { const i = document.createElement('img'); i.src = 'model_map.svg';"
                      " const p = document.createElement('p'); p.textContent = 'pale words'; p.style.color = '#eee';"
                      " document.querySelector('main').append(i, p); }")
        found = _axe(page)
        assert any("image-alt" in v for v in found) and any("color-contrast" in v for v in found), found
    finally:
        page.close()


PHONE = {"width": 390, "height": 844}


def _wider_than(page, width: int) -> int | None:
    """The page's width when it is wider than ``width`` (the reader would scroll sideways), else None."""
    scroll = page.evaluate("() => document.scrollingElement.scrollWidth")
    return scroll if scroll > width else None


def test_no_page_wider_than_a_phone(built, chromium):
    """Every page in a 390 x 844 viewport (a phone) is at most 390 px wide: long inline code breaks, tables and wide
    code or formulas scroll in their own box. A page with a long unbreakable word planted is caught."""
    found = {}
    for path in pages(built["out"]):
        page, _ = _open(chromium, path.as_uri(), PHONE)
        try:
            wide = _wider_than(page, PHONE["width"])
            if wide:
                found[path.name] = wide
        finally:
            page.close()
    assert found == {}, found
    page, _ = _open(chromium, (built["out"] / "index.html").as_uri(), PHONE)
    try:
        page.evaluate("() => { const p = document.createElement('p'); p.style.whiteSpace = 'nowrap';"
                      " p.textContent = 'torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)';"
                      " document.querySelector('main').append(p); }")
        assert _wider_than(page, PHONE["width"])
    finally:
        page.close()


# Tab through a page as a keyboard does; for each element that takes the focus: its accessible name (Chromium's own,
# through the DevTools protocol) and whether a focus ring is drawn (an outline or a box-shadow in its computed style)
FOCUSED_JS = """() => {
    const e = document.activeElement;
    if (!e || e === document.body || e === document.documentElement) return null;
    e.setAttribute('data-gt-focused', '');
    const s = getComputedStyle(e), r = e.getBoundingClientRect();
    const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0;
    const shadow = s.boxShadow !== 'none' && !/^rgba\\([^)]*, 0\\) 0px 0px 0px 0px$/.test(s.boxShadow);
    const kind = e.tagName.toLowerCase()
        + [...e.classList].filter(c => !/^(active|current)$/.test(c)).map(c => '.' + c).join('');
    return {kind, ring: outline || shadow, box: [r.x, r.y, r.width, r.height],
            text: (e.getAttribute('aria-label') || e.textContent || '').trim().slice(0, 60)};
}"""


def _focus_name(cdp) -> str:
    root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": "[data-gt-focused]"})["nodeId"]
    ax = cdp.send("Accessibility.getPartialAXTree", {"nodeId": node, "fetchRelatives": False})["nodes"]
    return (ax[0].get("name") or {}).get("value", "").strip() if ax else ""


def _ring_painted(page) -> bool:
    """Whether the focused element looks different from the same element blurred (the pixels around it, each taken
    once the theme's transitions are over)."""
    page.wait_for_timeout(300)
    x, y, w, h = page.evaluate("() => { const r = document.activeElement.getBoundingClientRect();"
                               " return [r.x, r.y, r.width, r.height]; }")
    vw, vh = page.viewport_size["width"], page.viewport_size["height"]
    clip = {"x": max(0, x - 8), "y": max(0, y - 8)}
    clip |= {"width": min(vw, x + w + 8) - clip["x"], "height": min(vh, y + h + 8) - clip["y"]}
    if clip["width"] <= 0 or clip["height"] <= 0:
        return False
    focused = page.screenshot(clip=clip)
    page.evaluate("() => document.activeElement.blur()")
    page.wait_for_timeout(300)
    blurred = page.screenshot(clip=clip)
    page.evaluate("() => document.querySelector('[data-gt-focused]').focus()")
    return focused != blurred


def tab_problems(ctx, page, seen_kinds: set | None = None, limit: int = 600) -> list[str]:
    """Every tab stop of ``page`` from its top: those without an accessible name, or without a visible focus ring
    (a computed outline or box-shadow for every one; for the first of each kind, by tag and classes, not in
    ``seen_kinds``, the pixels around it must change too)."""
    cdp = ctx.new_cdp_session(page)
    problems, first = [], None
    seen_kinds = set() if seen_kinds is None else seen_kinds
    try:
        for _ in range(limit):
            page.keyboard.press("Tab")
            f = page.evaluate(FOCUSED_JS)
            if f is None:
                break
            name = _focus_name(cdp)
            key = (f["kind"], tuple(round(v) for v in f["box"]), name)
            if key == first:  # round the page and back to its first stop
                page.evaluate("() => document.querySelector('[data-gt-focused]').removeAttribute('data-gt-focused')")
                break
            first = first or key
            if not name:
                problems.append(f"{f['kind']} ({f['text']!r}): no accessible name")
            if not f["ring"]:
                problems.append(f"{f['kind']} ({f['text']!r}): no focus ring (outline and box-shadow none)")
            elif f["kind"] not in seen_kinds and not _ring_painted(page):
                problems.append(f"{f['kind']} ({f['text']!r}): its focus ring is not seen")
            seen_kinds.add(f["kind"])
            page.evaluate("() => document.querySelector('[data-gt-focused]').removeAttribute('data-gt-focused')")
    finally:
        cdp.detach()
    return problems


# On a phone the theme lays its controls out another way (the sidebar behind a button, the header's buttons); a page's
# own content (code, answers, formulas, tables) tabs the same as on the desktop, where every page is walked. So the
# phone walks one page of each kind: the landing page, search, a docs page, and the notebook page with the most maths.
PHONE_PAGES = ("index.html", "search.html", "teaching.html", "04_attention_matrix.html")


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["desktop", "phone"])
def test_every_tab_stop_named_and_its_focus_seen(built, chromium, viewport):
    """The keyboard alone, on every page (the theme's, the landing page's and search's controls, code, answers,
    explorers, formulas), and on a phone on a page of each kind: each tab stop has an accessible name and shows where
    the focus is."""
    found, kinds = {}, set()
    walked = [p for p in pages(built["out"]) if viewport is None or p.name in PHONE_PAGES]
    assert viewport is None or len(walked) == len(PHONE_PAGES), [p.name for p in walked]
    for path in walked:
        page, _ = _open(chromium, path.as_uri(), viewport)
        try:
            problems = tab_problems(chromium, page, kinds)
            if problems:
                found[path.name] = problems
        finally:
            page.close()
    assert found == {}, json.dumps(found, indent=1)


def test_negative_control_tab_stops(built, chromium):
    """An unnamed tab stop, a button without a focus ring and one whose ring is clipped away are each caught."""
    page, _ = _open(chromium, (built["out"] / "index.html").as_uri())
    try:
        page.evaluate("""() => {
            const main = document.querySelector('main');
            const d = document.createElement('div'); d.tabIndex = 0; d.className = 'planted-unnamed';
            d.style.cssText = 'width: 20px; height: 20px;';
            const b = document.createElement('button'); b.textContent = 'No ring'; b.className = 'planted-bare';
            b.style.cssText = 'outline: none; box-shadow: none; border: none;';
            const c = document.createElement('div');
            c.style.cssText = 'overflow: hidden; width: 120px; height: 30px; padding: 0;';
            const i = document.createElement('button'); i.textContent = 'Clipped ring'; i.className = 'planted-clipped';
            i.style.cssText = 'display: block; width: 120px; height: 30px; outline-offset: 4px; border: none;'
                + ' background: none; padding: 0; margin: 0;';
            c.append(i);
            main.prepend(d, b, c); }""")
        problems = tab_problems(chromium, page)
        assert any("planted-unnamed" in p and "no accessible name" in p for p in problems), problems
        assert any("planted-bare" in p and "no focus ring" in p for p in problems), problems
        assert any("planted-clipped" in p and "not seen" in p for p in problems), problems
    finally:
        page.close()


def test_favicon(built):
    """Every page names the site's icon (site/favicon.svg, drawn in the model map's colours), and it is the file."""
    from helpers.plots import palette

    icon = (site.SITE / "favicon.svg").read_text(encoding="utf-8")
    colours = set(re.findall(r"#[0-9a-fA-F]{6}", icon))
    named = {v.lower() for v in vars(palette).values() if isinstance(v, str) and v.startswith("#")}
    assert colours and colours <= named, colours - named
    for path in pages(built["out"]):
        icons = re.findall(r'<link rel="icon" href="([^"]+)"', path.read_text(encoding="utf-8"))
        assert len(icons) == 1, (path.name, icons)
        assert (path.parent / icons[0]).read_text(encoding="utf-8") == icon, path.name


def test_math_typeset_offline(built, chromium, served):
    """MathJax (the site's own copy, the browser offline) typesets every page's math, from the file system and the
    server; a page whose MathJax is taken away shows none (the negative control)."""
    for url in ((built["out"] / "03_single_query_attention.html").as_uri(), served + "04_attention_matrix.html"):
        page, _ = _open(chromium, url)
        try:
            src = page.evaluate("() => [...document.scripts].map(s => s.src).filter(s => s.includes('mathjax'))")
            assert src and all("/_static/mathjax/" in s for s in src), src
            math = page.evaluate("() => document.querySelectorAll('span.math, div.math').length")
            untypeset = page.evaluate("() => [...document.querySelectorAll('span.math, div.math')]"
                                      ".filter(e => !e.querySelector('mjx-container svg')).map(e => e.textContent)")
            assert math > 10 and untypeset == [], (math, untypeset[:5])
            assert page.evaluate("() => document.querySelectorAll('mjx-merror, .MathJax_Error').length") == 0
        finally:
            page.close()
    page = chromium.new_page()
    try:
        page.route("**/mathjax/**", lambda route: route.abort())
        page.goto(served + "03_single_query_attention.html", wait_until="load")
        page.wait_for_timeout(1000)
        assert page.evaluate("() => document.querySelectorAll('mjx-container').length") == 0
    finally:
        page.close()


def test_answers_folded_in_the_browser(built, chromium):
    page, _ = _open(chromium, (built["out"] / "01_bigrams.html").as_uri())
    try:
        answer = page.locator("details.gt-answer").first
        code = answer.locator("pre")
        assert answer.is_visible() and not code.is_visible()  # closed: the summary shows, the code does not
        answer.locator("summary").click()
        assert code.is_visible()  # the reader asked
    finally:
        page.close()


def test_explorers_show_their_pictures_in_the_browser(built, chromium):
    page, _ = _open(chromium, (built["out"] / "04_attention_matrix.html").as_uri())
    try:
        boxes = page.locator(".gt-static-explorer")
        assert boxes.count() >= 1
        for i in range(boxes.count()):
            view = boxes.nth(i).locator(".gt-view").first
            assert view.is_visible() and view.bounding_box()["height"] > 50
            assert boxes.nth(i).locator(".gt-caption").first.inner_text().strip()
            assert boxes.nth(i).locator(".gt-live a").count() == 2
    finally:
        page.close()


@pytest.mark.parametrize("origin", ["file", "server"])
def test_search_finds_a_page(built, chromium, served, origin):
    base = (built["out"] / "search.html").as_uri() if origin == "file" else served + "search.html"
    page, _ = _open(chromium, base + "?q=bigram")
    try:
        page.wait_for_selector("#search-results ul li a, ul.search li a", timeout=30_000)
        hrefs = page.evaluate("() => [...document.querySelectorAll('#search-results a, ul.search a')]"
                              ".map(a => a.getAttribute('href'))")
        assert any("01_bigrams" in h for h in hrefs), hrefs
    finally:
        page.close()


# --- the command ----------------------------------------------------------------------------------------------------
def test_missing_sphinx_says_so_in_one_sentence(tmp_path):
    result = subprocess.run([sys.executable, "-m", "tools.site", "--sphinx", str(tmp_path / "no-sphinx"),
                             "--out", str(tmp_path / "o"), "--work", str(tmp_path / "w")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("run.sh site: the site's tools are not installed"), result.stderr


def test_run_sh_site_without_npm_says_so(tmp_path):
    """`bash run.sh site` on a machine without npm stops with one sentence naming it (PATH without npm and node)."""
    if not (ROOT / ".venv" / ".gt-installed").is_file():
        pytest.skip("needs the set-up .venv (bash run.sh setup)")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        d = Path(folder)
        if not d.is_dir() or str(d).startswith(str(ROOT)):
            continue
        for exe in d.iterdir():
            if exe.name not in ("npm", "node", "npx") and not (bin_ / exe.name).exists():
                try:
                    (bin_ / exe.name).symlink_to(exe)
                except OSError:
                    pass
    env = {**os.environ, "PATH": str(bin_)}
    env.pop("GT_VENV", None)
    result = subprocess.run(["bash", str(ROOT / "run.sh"), "site"], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("run.sh: the course site needs npm") and "not installed" in last, result.stderr
