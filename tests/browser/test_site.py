"""The course site (``bash run.sh site``, tools/site.py), built once for this file and read as a reader's browser reads
it: headless Chromium from the file system (file://) and from a static server on 127.0.0.1.

Checked: every page loads with its styles and scripts and no error; every internal link and anchor resolves; every
image carries its text alternative; axe-core finds no critical or serious violation; MathJax typesets the math from
the site's own copy; each explorer shows the picture it drew, with its caption and how to move it live; the exercises
are blank with the series' answers folded (closed); search finds a page; the landing page quotes README; nothing is
fetched from the network (the build ran under the suite's offline guard, the browser has a dead proxy). Negative
controls show that the link, alt, axe, math and answer checks can fail.

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
    assert "For whom:" in text and "9.1 hours" in text
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


def _open(ctx, url: str):
    """A page at ``url`` once loaded and MathJax is done: (page, errors: scripts' errors and failed requests)."""
    page = ctx.new_page()
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
# cells, a check's output, the folded answers, the static explorers, MathJax); the notebooks' outputs themselves are
# also audited with it in JupyterLab (tests/browser) and their colours are checked by
# tests/unit/plots/test_palette.py. Every other rule runs on every page.
CONTRAST_PAGES = {"index.html", "search.html", "01_bigrams.html", "04_attention_matrix.html",
                  "10_circuits_and_cost.html"}


def _axe(page, contrast: bool = True) -> list[str]:
    from axe_playwright_python.base import AXE_SCRIPT

    page.evaluate(AXE_SCRIPT)
    options = {"resultTypes": ["violations"]} | ({} if contrast else {"rules": {"color-contrast": {"enabled": False}}})
    result = page.evaluate("(options) => axe.run(document, options)", options)
    return [f"{v['impact']}: {v['id']} x{len(v['nodes'])} ({v['help']}; e.g. {v['nodes'][0]['target']})"
            for v in result["violations"] if v["impact"] in ("critical", "serious")]


def test_axe_no_critical_or_serious(built, chromium):
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
