"""What an explorer is in the page, and how its controls are changed from the keyboard alone and checked.

``ExplorerControls`` is the part of ``NotebookPage`` that drives widgets (``page.py`` has the rest)."""

from __future__ import annotations

import re
from pathlib import Path

# Text that means a widget was NOT rendered as a widget (searched only inside output areas).
FALLBACK_PATTERNS = [
    r"\b(?:Int|Float|FloatLog|IntRange|FloatRange|Selection|SelectionRange)Slider\(",
    r"\b(?:VBox|HBox|Box|GridBox|Tab|Accordion)\(children=",
    r"\b(?:Dropdown|Text|Textarea|ToggleButton|Checkbox|Button|Image|HTML|Label|Output|"
    r"Select|RadioButtons|ToggleButtons|Play|IntText|FloatText)\((?:value|options|description|layout|outputs)=",
    r"Loading widget\.\.\.",
    r"Error displaying widget",
    r"A Jupyter widget could not be displayed",
]
FALLBACK_RE = re.compile("|".join(FALLBACK_PATTERNS))

DROPDOWN_PROBLEM = ("a dropdown can't be changed from the keyboard in JupyterLab (ArrowDown moves to the next "
                    "cell): use ToggleButtons or a SelectionSlider")


def parse_state(state: str | None) -> dict[str, str]:
    """``"n=3;text=a b"`` -> ``{"n": "3", "text": "a b"}`` (the caption's data-state, values untrimmed)."""
    out = {}
    for kv in (state or "").split(";"):
        k, sep, v = kv.partition("=")
        if sep and k.strip():
            out[k.strip()] = v
    return out


def slider_expected(readout: str) -> tuple[str, float]:
    """A slider's readout -> (the value the caption should name, the tolerance its rounding allows)."""
    expected = readout.strip().replace("\u2212", "-")
    dec = expected.split(".")[1] if "." in expected else ""
    return expected, (0.5 * 10 ** -len(dec) + 1e-9 if dec.isdigit() else 0.5)


class ExplorerControls:
    """Mixed into NotebookPage: finds the explorers, presses their controls, checks caption and picture."""

    def operate_explorers(self) -> list[dict]:
        """Operate every control of every gt-caption explorer from the keyboard; the caption must name
        the new value, the picture (its .gt-view) must show that same state, and it must change."""
        explorers = self.js("() => gt.explorers()")
        self.report.explorers = len(explorers)
        for ex in explorers:
            self.js("i => gt.scrollTo(i)", ex["cell"])
            if not ex["hasView"]:
                self.report.problems.append(f"explorer {ex['id']} ({ex['state']}): its picture has no "
                                            '<div class="gt-view" data-state=...> root (helpers.widgets.base.'
                                            "Explorer draws one), so no test can tell whose picture it is")
            self.report.problems += self.keyboard_walk(ex["id"], f"explorer {ex['id']} ({ex['state']})")
            for ctl in ex["controls"]:
                try:
                    self._operate(ex["id"], ctl)
                except TimeoutError as e:
                    self.report.problems.append(str(e))
            # A change may legitimately draw the same picture (identical PNG: no new image), but
            # an explorer whose picture never changes is not redrawing.
            operable = [c for c in ex["controls"] if c["kind"] != "dropdown"]
            if operable and ex["id"] not in self.report.images_changed:
                self.report.problems.append(f"explorer {ex['id']} ({ex['state']}): the caption followed "
                                            "the controls but the picture never changed")
        return explorers

    def control(self, ctl: dict):
        """The Playwright locator of a control found by ``gt.explorers()``."""
        return self.page.locator(f'[data-gt-control="{ctl["id"]}"]')

    def press_control(self, ctl: dict, *, word: str | None = None,
                      key: str | None = None) -> tuple[object, float] | None:
        """Change one control with the keyboard only, as a learner without a mouse would: focus it, press
        keys. Returns (the value the caption should now name, tolerance), or None when the control has
        nothing to change to (a one-button choice, a slider with one value). No clicks, no ``select_option``:
        slider    focus the handle, ``key`` or ArrowRight (ArrowLeft at the top): noUiSlider handles the arrows
                  and preventDefaults them, so JupyterLab's command-mode arrow shortcuts never see them.
        choice    focus the button after the active one, Space. Why Space: no JupyterLab shortcut is
                  bound to it, and a focused <button> or checkbox activates on it (on keyup) in every
                  browser. Enter works on buttons too (checked in JupyterLab 4.6: its only Enter shortcut,
                  notebook:enter-edit-mode, is bound to `.jp-Notebook.jp-mod-commandMode .jp-Cell:focus`,
                  the cell itself, not a button inside it), but Enter does nothing on a checkbox, so one
                  key serves every button-like control.
        toggle,
        checkbox  focus, Space.
        text      focus (no click), Control+A, type ``word`` (default: corpus words), Enter (a Combobox or a Text with
                  continuous_update=False only commits on Enter; for the others it changes nothing).
        dropdown  raises: it cannot be changed from the keyboard in JupyterLab (DROPDOWN_PROBLEM)."""
        loc, kind, kb = self.control(ctl), ctl["kind"], self.page.keyboard
        if kind == "slider":
            now, top = float(loc.get_attribute("aria-valuenow")), float(loc.get_attribute("aria-valuemax"))
            if top <= float(loc.get_attribute("aria-valuemin")):
                return None  # one value only (e.g. a query slider over a one-token text)
            readout = self.readout(ctl)
            old = readout.inner_text()
            loc.focus()
            # Notebook 7 binds plain ArrowLeft/Right in command mode (notebook:move-cursor-heading-above-or-collapse /
            # -below-or-expand) and, unlike JupyterLab, handles them before the slider does: the handle never moves.
            # Shift+arrow (one step, no binding) and PageUp/PageDown work there; the README says so to learners.
            shift = "Shift+" if self.ui == "notebook" and not key else ""
            kb.press(key or (shift + ("ArrowLeft" if now >= top else "ArrowRight")))
            self.wait("([el, old]) => el.innerText !== old", [readout.element_handle(), old],
                      what=f"slider {ctl['label']!r}: the readout to move", timeout_ms=10000)
            return slider_expected(readout.inner_text())
        if kind == "choice":
            i = self.js("id => gt.nextChoice(id)", ctl["id"])
            if i < 0:
                return None
            button = loc.locator("button.widget-toggle-button").nth(i)
            button.focus()
            kb.press("Space")
            return button.text_content().strip(), 0.0
        if kind in ("toggle", "checkbox"):
            was = loc.evaluate("el => el.type === 'checkbox' ? el.checked : el.classList.contains('mod-active')")
            loc.focus()
            kb.press("Space")
            return (not was), 0.0
        if kind == "text":
            # Common words of the corpus over the box's text: one word where the box holds one token,
            # a few where it holds a prompt (one token would leave e.g. a query slider no room to move).
            was = loc.input_value().strip().lower()
            if word is None:
                word = ("and the lord said" if was != "and the lord said" else "the lord spake") if " " in was \
                    else ("lord" if was == "the" else "the")
            loc.focus()
            kb.press("ControlOrMeta+a")
            kb.type(word)
            kb.press("Enter")
            return loc.input_value(), 0.0
        raise ValueError(DROPDOWN_PROBLEM if kind == "dropdown" else f"unknown control kind {kind!r}")

    def readout(self, ctl: dict):
        """The text readout beside a slider handle (the value the learner reads)."""
        return self.control(ctl).locator(
            "xpath=ancestor::div[contains(@class,'widget-slider')]//div[contains(@class,'widget-readout')]")

    def _operate(self, e: int, ctl: dict) -> str | None:
        """Change one control from the keyboard and check the redraw; returns the caption's key that
        named the new value (None if the control could not be changed)."""
        before = self.js("e => gt.view(e)", e)
        words_before = self.js("e => gt.viewWords(e)", e)
        kind = ctl["kind"]
        name = f"explorer {e} ({before['state']}), {kind} {ctl['label'].strip()!r}"
        if kind == "dropdown":
            self.report.problems.append(f"{name}: {DROPDOWN_PROBLEM}")
            return None
        self.control(ctl).scroll_into_view_if_needed()
        pressed = self.press_control(ctl)
        if pressed is None:
            return None
        expected, tol = pressed
        try:
            key = self.wait("([e, b, k, x, t]) => gt.updated(e, b, k, x, t)", [e, before, kind, expected, tol],
                            what=f"{name}: the caption to name {expected!r}", timeout_ms=20000)
        except TimeoutError as err:
            after = self.js("e => gt.view(e)", e)
            raise TimeoutError(f"{err}; caption now {after['state']!r} (error={after['error']}: "
                               f"{after['caption'][:100]!r})") from None
        self.wait("e => gt.settledView(e)", e, what=f"{name}: the redraw to finish", timeout_ms=20000)
        try:
            self.wait("e => gt.consistent(e)", e, what=f"{name}: the picture to show the caption's state",
                      timeout_ms=5000)
        except TimeoutError:
            v = self.js("e => gt.view(e)", e)
            self.report.problems.append(f"{name}: the picture shows {v['viewState']!r} but the caption names "
                                        f"{v['state']!r}")
        after = self.js("e => gt.view(e)", e)
        if after["src"] != before["src"]:
            self.report.images_changed.add(e)
            if self.js("e => gt.viewWords(e)", e) == words_before:
                self.report.problems.append(f"{name}: the picture changed but its words (aria-label, alt, caption) "
                                            "did not: a screen reader is told the old state")
        self.report.problems += self.accessibility_problems(e, name)
        if after["error"]:
            self.report.problems.append(f"{name}: caption shows an error after setting {expected!r}: "
                                        f"{after['caption'][:120]!r}")
        self.report.operated.append(f"{kind} -> {after['state']}")
        return key

    def _cdp(self):
        """A Chrome DevTools Protocol session on this page (one per page, kept on it)."""
        cdp = getattr(self.page, "gt_cdp", None)
        if cdp is None:
            cdp = self.page.gt_cdp = self.page.context.new_cdp_session(self.page)
        return cdp

    def ax_nodes(self, expression: str, role: str | None = None) -> list[dict]:
        """Chromium's own accessibility nodes, what a screen reader is given, for the element the JavaScript
        ``expression`` evaluates to: its node, or with ``role`` (Chromium's name: "image", "textbox", ...) every node
        of that role in its subtree. Each {"role", "name", "description", "ignored"}; [] when there is no element."""
        cdp = self._cdp()
        found = cdp.send("Runtime.evaluate", {"expression": expression})["result"]
        if "objectId" not in found:
            return []
        try:
            if role:
                nodes = cdp.send("Accessibility.queryAXTree", {"objectId": found["objectId"], "role": role})["nodes"]
            else:
                nodes = cdp.send("Accessibility.getPartialAXTree", {"objectId": found["objectId"],
                                                                    "fetchRelatives": False})["nodes"]
        finally:
            cdp.send("Runtime.releaseObject", {"objectId": found["objectId"]})

        def value(node: dict, key: str) -> str:
            return str((node.get(key) or {}).get("value") or "")
        return [{"role": value(n, "role"), "name": value(n, "name").strip(), "description": value(n, "description"),
                 "ignored": bool(n.get("ignored"))} for n in nodes]

    def keyboard_walk(self, e: int, name: str = "", limit: int = 80) -> list[str]:
        """Tab through explorer ``e`` from its first tab stop until the focus leaves it, as a learner with a keyboard
        or a screen reader does: every element the focus lands on must have a role and a name in Chromium's
        accessibility tree (what a screen reader says when the focus lands there). An editable slider readout that
        ipywidgets leaves unnamed is such a stop. The stops, as "role 'name'", go to ``report.tab_stops[e]``."""
        name = name or f"explorer {e}"
        stops = self.report.tab_stops.setdefault(e, [])
        if not self.js("e => gt.focusFirst(e)", e):
            return []
        problems = []
        for _ in range(limit):
            where = self.js("e => gt.focusInfo(e)", e)
            if not where["inside"]:
                return problems
            node = (self.ax_nodes("document.activeElement") or [{}])[0]
            role, said = node.get("role", ""), node.get("name", "")
            stops.append(f"{role} {said!r}")
            if node.get("ignored") or role in ("", "generic", "none", "StaticText", "LabelText") or not said:
                problems.append(f"{name}: a tab stop a screen reader cannot name: {where['what']} is "
                                f"{role or 'without a role'}{' named ' + repr(said) if said else ', unnamed'}")
            self.page.keyboard.press("Tab")
        return problems + [f"{name}: {limit} presses of Tab never left the explorer"]

    def picture_problems(self, e: int, name: str = "") -> list[str]:
        """What a screen reader is not told about explorer ``e``'s picture, in Chromium's accessibility tree: an image
        in it without a name (an overlay drawn over a named image must be hidden from it or named itself), and a
        picture not tied to its caption: its aria-describedby must lead to this explorer's own caption, and
        Chromium's description of it must be the caption's words."""
        name = name or f"explorer {e}"
        problems = []
        view = f"document.querySelector('[data-gt-explorer=\"{e}\"] .gt-view')"
        unnamed = [n for n in self.ax_nodes(view, role="image") if not n["ignored"] and not n["name"]]
        if unnamed:
            problems.append(f"{name}: {len(unnamed)} image(s) in the picture without a name in the accessibility "
                            "tree (no alt or aria-label, and not aria-hidden)")
        tie = self.js("e => gt.captionTie(e)", e)
        if not tie["hasView"]:
            return problems
        if not tie["own"]:
            problems.append(f"{name}: the picture is not tied to its caption: its aria-describedby is {tie['ids']} and "
                            f"the caption's id {tie['captionId']!r}")
            return problems
        said = (self.ax_nodes(view) or [{}])[0].get("description", "")
        missing = [w for w in said.split() if w not in tie["caption"]]
        if not said or missing:
            problems.append(f"{name}: a screen reader describes the picture as {said[:80]!r}, not by its caption "
                            f"{tie['caption'][:80]!r}")
        return problems

    def accessibility_problems(self, e: int, name: str = "") -> list[str]:
        """What a screen reader is not told about explorer ``e``: a control without a name in the page's
        accessibility tree (Playwright's aria snapshot), a slider whose value text is not its readout, a choice
        whose pressed button is not the one drawn as chosen, a picture without words, and what
        ``picture_problems`` finds (an unnamed image, a picture not tied to its caption)."""
        name = name or f"explorer {e}"
        problems = self.picture_problems(e, name)
        tree = self.page.locator(f'[data-gt-explorer="{e}"]').aria_snapshot()
        for line in tree.splitlines():
            m = re.match(r"\s*- (slider|button|checkbox|textbox|radio|combobox|spinbutton|switch)\b(.*)", line)
            if m and not re.match(r'\s*"[^"]+"', m.group(2)):
                problems.append(f"{name}: a {m.group(1)} without a name in the accessibility tree ({line.strip()})")
        for c in self.js("e => gt.controlValues(e)", e):
            if not c["name"]:
                problems.append(f"{name}: a {c['kind']} without a name (its description is not on it)")
            if (c["value"] or "") != c["shown"]:
                problems.append(f"{name}: a {c['kind']} ({c['name']!r}) tells a screen reader {c['value']!r} while "
                                f"the page shows {c['shown']!r}")
        if self.js("e => !!(gt.root(e).querySelector('.gt-view'))", e) and not self.js("e => gt.viewWords(e)", e):
            problems.append(f"{name}: the picture has no words (aria-label, alt or caption)")
        return problems

    def check_zoom(self, screenshot: Path | None = None, width: int = 640) -> None:
        """WCAG 1.4.10 at 200 % zoom: the page's layout width halves (1280 -> 640 CSS pixels, what a browser at
        200 % gives). The notebook must not scroll sideways (a wide picture may scroll inside its widget); every
        control of every explorer stays inside the window with a size, and the first one still works from the
        keyboard (caption and picture follow). A screenshot at that width goes to ``screenshot``."""
        size = self.page.viewport_size
        self.page.set_viewport_size({"width": width, "height": size["height"]})
        try:
            self.page.wait_for_timeout(300)   # (one layout pass: nothing to wait on but the browser's reflow)
            for ex in self.js("() => gt.explorers()"):
                e = ex["id"]
                self.js("i => gt.scrollTo(i)", ex["cell"])
                r = self.js("e => gt.reflow(e)", e)
                if r["notebookScroll"] > 1:
                    self.report.problems.append(f"at {width} px (200 % zoom) the notebook scrolls sideways by "
                                                f"{r['notebookScroll']} px beside explorer {e}")
                for c in r["controls"]:
                    if c["width"] < 1 or c["height"] < 1 or c["left"] < -1 or c["right"] > r["width"] + 1:
                        self.report.problems.append(f"at {width} px (200 % zoom) control {c['id']} of explorer {e} "
                                                    f"is not inside the window ({c['left']:.0f}-{c['right']:.0f} px)")
                first = next((c for c in ex["controls"] if c["kind"] != "dropdown"), None)
                if first:
                    self._operate(e, first)
            if screenshot:
                screenshot.parent.mkdir(parents=True, exist_ok=True)
                self.page.screenshot(path=str(screenshot))
        finally:
            self.page.set_viewport_size(size)

    def wait_quiet(self, e: int, ms: float = 500, timeout_ms: float = 30000) -> dict:
        """Wait until the kernel is idle and explorer ``e``'s caption and picture have not changed
        for ``ms`` (every key of a burst answered, including ipywidgets' throttled last update);
        returns what is shown then."""
        self.js("() => gt.quietReset()")
        self.wait("([e, ms]) => gt.quiet(e, ms)", [e, ms], what=f"explorer {e} to settle after the keys",
                  timeout_ms=timeout_ms)
        return self.js("e => gt.view(e)", e)

    def stale_problems(self, e: int, key: str, kind: str, expected, tol: float = 1e-9) -> list[str]:
        """What is wrong with explorer ``e`` if its control under caption key ``key`` shows ``expected``:
        the caption must name exactly that value (text: the box's value, character for character),
        show no error, and the picture's .gt-view must carry the caption's state. Empty: not stale."""
        v = self.js("e => gt.view(e)", e)
        state = parse_state(v["state"])
        problems = []
        if v["error"]:
            problems.append(f"the caption shows an error: {v['caption'][:120]!r}")
        elif key not in state:
            problems.append(f"the caption's state {v['state']!r} has no {key!r}")
        else:
            shown = state[key]
            ok = (shown == expected if kind == "text" else
                  self.js("([k, v, x, t]) => gt.matches(k, v, x, t)", [kind, shown, expected, tol]))
            if not ok:
                problems.append(f"stale: the control shows {expected!r} but the caption names {key}={shown!r}")
        if v["hasView"] and v["viewState"] != v["state"]:
            problems.append(f"stale picture: the picture shows {v['viewState']!r}, the caption {v['state']!r}")
        return problems

