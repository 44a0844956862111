() => {
  if (window.gt) return;
  const app = () => window.jupyterapp;
  const panel = () => app().shell.currentWidget;
  const kernel = () => { const s = panel() && panel().sessionContext; return s && s.session && s.session.kernel; };
  const parseState = (s) => { const out = {}; (s || '').split(';').forEach(kv => {
      const i = kv.indexOf('='); if (i > 0) out[kv.slice(0, i).trim()] = kv.slice(i + 1).trim(); }); return out; };
  // (sliders print negative numbers with a Unicode minus sign)
  const norm = (s) => String(s).replace(/\u2212/g, '-').replace(/\s+/g, ' ').trim().toLowerCase();
  const TRUE = ['true', '1', 'on', 'yes'], FALSE = ['false', '0', 'off', 'no'];
  const matches = (kind, value, expected, tol) => {
    if (kind === 'slider') {
      const a = parseFloat(norm(value)), b = parseFloat(norm(expected));
      if (!isNaN(a) && !isNaN(b) && /^[-+0-9.eE]+$/.test(String(value).trim())) return Math.abs(a - b) <= tol;
      return norm(value) === norm(expected);
    }
    if (kind === 'toggle' || kind === 'checkbox') return (expected ? TRUE : FALSE).includes(norm(value));
    // a button's or option's label may say more than the state ("head 0" for head=0), or less
    if (kind === 'choice' || kind === 'dropdown') return norm(value) === norm(expected) ||
        norm(expected).split(' ').includes(norm(value)) || norm(value).split(' ').includes(norm(expected));
    return norm(value) === norm(expected);  // text
  };
  window.gt = {
    parseState,
    path: () => panel() && panel().context && panel().context.path,
    // Connected AND idle AND ready, continuously for 300 ms (the widget manager's comm requests
    // after a kernel connects make 'idle' flicker; Run All issued then can be lost).
    kernelReady(path) {
      const p = panel(), k = kernel();
      const ok = p && p.context && p.context.path === path && p.sessionContext.isReady && k &&
                 k.connectionStatus === 'connected' && k.status === 'idle';
      if (!ok) { gt._since = null; return false; }
      if (gt._since == null) gt._since = performance.now();
      return performance.now() - gt._since > 300;
    },
    kernelStatus() { const k = kernel(); return k ? k.status + '/' + k.connectionStatus : 'no kernel'; },
    runAll() { return app().commands.execute('notebook:run-all-cells'); },
    // Close the current notebook (its kernel shut down, its edits dropped) and open another.
    async open(path) {
      const p = panel();
      if (p && p.sessionContext) { await p.sessionContext.shutdown(); p.context.model.dirty = false; p.dispose(); }
      await app().commands.execute('docmanager:open', {path, factory: 'Notebook'});
    },
    cells() {
      const cells = panel().content.model.cells, out = [];
      for (let i = 0; i < cells.length; i++) {
        const c = cells.get(i);
        if (c.type !== 'code') { out.push({type: c.type}); continue; }
        const outs = c.outputs.toJSON();
        out.push({type: 'code', count: c.executionCount, state: c.executionState || null,
          widgetOutputs: outs.map((o, j) => (o.data && o.data['application/vnd.jupyter.widget-view+json']) ? j : -1).filter(j => j >= 0),
          errors: outs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue)});
      }
      return out;
    },
    started() { return gt.cells().some(c => c.type === 'code' && (c.count != null || c.state === 'running')) ||
                       (kernel() && kernel().status === 'busy'); },
    finished() {
      const k = kernel(); if (!k || k.status !== 'idle') return false;
      const cells = gt.cells().filter(c => c.type === 'code');
      if (cells.some(c => c.state === 'running')) return false;
      return cells.some(c => c.errors.length) || cells.every(c => c.count != null);
    },
    cellNode(i) { return panel().content.widgets[i].node; },
    async scrollTo(i) { await panel().content.scrollToItem(i, 'start'); panel().content.widgets[i].node.scrollIntoView({block: 'start'}); },
    // What the learner sees in the output areas of cell i.
    outputs(i) {
      const node = gt.cellNode(i);
      return Array.from(node.querySelectorAll('.jp-OutputArea-child')).map(ch => {
        const o = ch.querySelector('.jp-OutputArea-output');
        return {widget: !!(o && o.querySelector('.jupyter-widgets')), text: o ? o.innerText : '',
                mime: o ? o.getAttribute('data-mime-type') : null};
      });
    },
    settled(i, widgetIdx) {
      const outs = gt.outputs(i);
      return widgetIdx.every(j => outs[j] && (outs[j].widget || (outs[j].text && !/Loading widget/.test(outs[j].text))));
    },
    // Tag every explorer and its controls. An explorer is the box (VBox) whose direct child is the
    // gt-caption's HTML widget; its picture is the box's `.gt-view` element (helpers.widgets.base.Explorer:
    // an HTML widget whose root div carries the same data-state as the caption) or, for explorers from
    // before that contract, its <img> (PNG) or its other HTML widget.
    // Control kinds: slider (every noUiSlider: Int/Float/FloatLog/SelectionSlider, one handle), choice (a
    // ToggleButtons group, ONE control however many buttons), toggle (a lone ToggleButton), checkbox, text
    // (Text, Combobox: an <input>), and dropdown, found only to be reported (see jlab.DROPDOWN_PROBLEM).
    explorers() {
      const roots = [];
      document.querySelectorAll('.jp-OutputArea-output .gt-caption').forEach(cap => {
        const w = cap.closest('.widget-html'), r = w && w.parentElement;
        if (r && !roots.includes(r)) roots.push(r);
      });
      const ws = panel().content.widgets;
      return roots.map((r, e) => {
        r.dataset.gtExplorer = e;
        const cell = ws.findIndex(w => w.node.contains(r));
        const controls = [];
        const add = (kind, el, extra) => {
          el.dataset.gtControl = e + '-' + controls.length;
          // (textContent, not innerText: a cell scrolled out of view is not rendered and has no innerText)
          const box = el.closest('.widget-toggle-buttons, .widget-checkbox, .widget-inline-hbox');
          const text = (n) => n ? n.textContent.replace(/\u200b/g, '').trim() : '';
          const label = (box && (text(box.querySelector('.widget-label')) || text(box.querySelector('.widget-label-basic')))) ||
                        text(el);
          controls.push(Object.assign({kind, id: el.dataset.gtControl, label, el}, extra || {}));
        };
        r.querySelectorAll('.widget-slider .noUi-handle-lower').forEach(el => add('slider', el));
        r.querySelectorAll('.widget-toggle-buttons').forEach(el =>
          add('choice', el, {options: Array.from(el.querySelectorAll('button.widget-toggle-button')).map(b => b.textContent.trim())}));
        r.querySelectorAll('.widget-dropdown select').forEach(el => add('dropdown', el));
        r.querySelectorAll('.widget-text input, .widget-textarea textarea').forEach(el =>
          add('text', el, {combobox: el.hasAttribute('list')}));
        r.querySelectorAll('button.widget-toggle-button').forEach(el => { if (!el.closest('.widget-toggle-buttons')) add('toggle', el); });
        r.querySelectorAll('.widget-checkbox input[type=checkbox]').forEach(el => add('checkbox', el));
        // in the order the learner sees them (the ids stay as tagged)
        controls.sort((a, b) => (a.el.compareDocumentPosition(b.el) & Node.DOCUMENT_POSITION_FOLLOWING) ? -1 : 1);
        controls.forEach(c => delete c.el);
        return {id: e, cell, controls, state: gt.view(e).state, hasView: gt.view(e).hasView};
      });
    },
    root(e) { return document.querySelector(`[data-gt-explorer="${e}"]`); },
    // At a narrow window (200 % zoom): does the notebook scroll sideways, and where are explorer e's controls?
    reflow(e) {
      const n = panel().content.node;
      const outer = n.closest('.jp-WindowedPanel-outer') || n.querySelector('.jp-WindowedPanel-outer') || n;
      const r = gt.root(e), width = window.innerWidth;
      const controls = Array.from(r.querySelectorAll('[data-gt-control]')).map(c => {
        const b = c.getBoundingClientRect();
        return {id: c.dataset.gtControl, left: b.left, right: b.right, width: b.width, height: b.height};
      });
      const view = r.querySelector('.gt-view');
      return {width, notebookScroll: outer.scrollWidth - outer.clientWidth, controls,
              viewScroll: view ? view.scrollWidth - view.clientWidth : 0};
    },
    // What a screen reader is told about explorer e's controls: a slider's name and value text beside the
    // readout a sighted learner reads; a choice's group name and pressed button beside the one drawn as chosen.
    controlValues(e) {
      const r = gt.root(e), out = [];
      r.querySelectorAll('.widget-slider').forEach(s => {
        const h = s.querySelector('[role="slider"]'), ro = s.querySelector('.widget-readout');
        out.push({kind: 'slider', name: h && h.getAttribute('aria-label'), value: h && h.getAttribute('aria-valuetext'),
                  shown: ro ? ro.textContent.trim() : ''});
      });
      r.querySelectorAll('.widget-toggle-buttons').forEach(g => {
        const bs = Array.from(g.querySelectorAll('button'));
        out.push({kind: 'choice', name: g.getAttribute('aria-label'),
                  value: bs.filter(b => b.getAttribute('aria-pressed') === 'true').map(b => b.textContent.trim()).join(','),
                  shown: bs.filter(b => b.classList.contains('mod-active')).map(b => b.textContent.trim()).join(',')});
      });
      return out;
    },
    // The tie between explorer e's caption and its picture: the ids the picture's aria-describedby names, and
    // whether they lead (ids resolve in the whole page) to this explorer's own caption.
    captionTie(e) {
      const r = gt.root(e), cap = r.querySelector('.gt-caption'), view = r.querySelector('.gt-view');
      const ids = view ? (view.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean) : [];
      return {hasView: !!view, ids, captionId: cap ? cap.id : null, role: view ? view.getAttribute('role') : null,
              own: !!cap && ids.some(id => document.getElementById(id) === cap),
              caption: cap ? cap.textContent.replace(/\s+/g, ' ').trim() : ''};
    },
    // The keyboard walk's start: focus explorer e's first tab stop (in page order); false if it has none.
    focusFirst(e) {
      const r = gt.root(e);
      const stop = Array.from(r.querySelectorAll('a[href], button, input, select, textarea, [tabindex], [contenteditable]'))
        .find(el => (el.tabIndex >= 0 || el.isContentEditable) && !el.disabled && el.getClientRects().length);
      if (!stop) return false;
      stop.focus();
      return document.activeElement === stop;
    },
    // Where the focus is: inside explorer e or not, and what element (for a message).
    focusInfo(e) {
      const a = document.activeElement, r = gt.root(e);
      const cls = a ? String(a.getAttribute('class') || '').trim().split(/\s+/).slice(0, 3).join('.') : '';
      return {inside: !!(a && r && r.contains(a) && a !== r), what: a ? a.tagName.toLowerCase() + (cls ? '.' + cls : '') : null};
    },
    // The picture's words: every aria-label, alt and caption inside explorer e's .gt-view; a picture drawn as
    // plain HTML text (bars with their numbers written out) is its own words.
    viewWords(e) {
      const v = gt.root(e) && gt.root(e).querySelector('.gt-view');
      if (!v) return '';
      const labelled = Array.from(v.querySelectorAll('[aria-label], img[alt], caption'));
      if (!labelled.length) return v.textContent.trim();
      return labelled.map(n => n.tagName === 'CAPTION' ? n.textContent
                                                      : (n.getAttribute('aria-label') || n.getAttribute('alt')))
        .join(' | ');
    },
    picture(r) {
      const gv = r.querySelector('.gt-view');
      if (gv) return gv;
      const kids = Array.from(r.children);
      return kids.find(k => k.matches('img.widget-image')) ||
             kids.filter(k => k.matches('.widget-html') && !k.querySelector('.gt-caption')).pop() || null;
    },
    signature(pic) {
      if (!pic) return null;
      if (pic.tagName === 'IMG') return pic.getAttribute('src');
      const t = pic.innerHTML; let h = 0;
      for (let i = 0; i < t.length; i++) h = (h * 31 + t.charCodeAt(i)) | 0;
      return 'html:' + t.length + ':' + h;
    },
    view(e) {
      const r = gt.root(e);
      const cap = r.querySelector('.gt-caption'), pic = gt.picture(r), gv = r.querySelector('.gt-view');
      return {state: cap ? cap.getAttribute('data-state') : null, error: !!(cap && cap.classList.contains('gt-error')),
              caption: cap ? cap.innerText : '', src: gt.signature(pic), kind: pic ? pic.tagName.toLowerCase() : null,
              hasView: !!gv, viewState: gv ? gv.getAttribute('data-state') : null,
              loaded: !!pic && (pic.tagName !== 'IMG' || (pic.complete && pic.naturalWidth > 0))};
    },
    matches,
    // The key of `now` whose value changed from `before` and names `expected`, or null.
    changedKey(before, now, kind, expected, tol) {
      if (now === before) return null;
      const a = parseState(now), b = parseState(before);
      return Object.keys(a).find(k => a[k] !== b[k] && matches(kind, a[k], expected, tol)) || null;
    },
    // The caption names the expected value under a key that changed (returns that key).
    updated(e, before, kind, expected, tol) { return gt.changedKey(before.state, gt.view(e).state, kind, expected, tol) || false; },
    // The picture shown is the picture of the state the caption names (no .gt-view: nothing to compare).
    consistent(e) { const v = gt.view(e); return !v.hasView || v.viewState === v.state; },
    // The kernel has finished the redraw (iopub is handled in order: caption, picture, then idle)
    // and the image shown, if an <img>, is loaded.
    settledView(e) { const k = kernel(), v = gt.view(e); return k && k.status === 'idle' && v.loaded; },
    // Kernel idle, and nothing (kernel status, caption state, picture) changed for `ms`: a burst of
    // key presses has been fully answered. Reset with gt.quietReset() before each wait.
    quietReset() { gt._quiet = null; },
    // A redraw answered in two steps whose second step is still to come (helpers/widgets/later.py): the heads
    // explorer's guesses=coming, the lens explorer's lens=coming.
    coming(state) { return /(^|;)(guesses|lens)=coming(;|$)/.test(state || ''); },
    quiet(e, ms) {
      const k = kernel(), v = gt.view(e), now = performance.now();
      const snap = [k && k.status, v.state, v.viewState, v.src, v.loaded].join('|');
      const q = gt._quiet;
      if (!q || q.snap !== snap || !k || k.status !== 'idle' || !v.loaded || gt.coming(v.state)) {
        gt._quiet = {snap, since: now}; return false;
      }
      return now - q.since >= ms;
    },
    // Test-only: overwrite the caption's or the picture's data-state (the stale check's negative control).
    doctor(e, which, state) {
      const el = gt.root(e).querySelector(which === 'view' ? '.gt-view' : '.gt-caption');
      const old = el.getAttribute('data-state'); el.setAttribute('data-state', state); return old;
    },
    // The index of the button after the active one in a choice group (cyclic).
    nextChoice(id) {
      const bs = Array.from(document.querySelectorAll(`[data-gt-control="${id}"] button.widget-toggle-button`));
      const i = bs.findIndex(b => b.classList.contains('mod-active'));
      return bs.length < 2 ? -1 : (i + 1) % bs.length;
    },
    // Latency probe for one explorer: any key press inside it (keydown, capture phase, so every control
    // starts the timer) -> the redraw painted. The redraw is over when the kernel is idle after being
    // busy since the press AND the explorer shows a new state: the caption's data-state changed (or, with
    // no caption change, the picture) and the picture's .gt-view carries the caption's state. Both orders
    // happen: usually the caption and picture change while the kernel is busy, but the idle status can
    // be handled before the widget updates reach the page, so a MutationObserver checks again when they
    // do. An idle with nothing changed (e.g. the answer to a ToggleButtons' extra "click" message) is not
    // the redraw; a new busy period waits for its idle. An <img> is also decoded. Then one frame
    // (requestAnimationFrame + a task) for the paint; the caption's and picture's data-state are recorded
    // then. `armed = false` lets untimed keys (a Backspace before a retype) through.
    installProbe(e) {
      if (gt._probeOff) gt._probeOff();
      const r = gt.root(e), k = kernel();
      // complete: for a redraw answered in two steps (the state says guesses=coming or lens=coming: later.py), the
      // time until the second step is painted too; for any other redraw, its sample
      const p = gt.probe = {armed: true, t0: null, busy: false, idle: false, before: null, samples: [], states: [],
                            viewStates: [], changed: [], via: [], complete: [], waiting: null};
      const onKey = () => {
        if (!p.armed || p.t0 != null) return;
        p.t0 = performance.now(); p.busy = false; p.idle = false; p.before = gt.view(e);
      };
      const check = (via) => {
        if (p.t0 == null || !p.idle) return;
        const now = gt.view(e), b = p.before;
        if (now.state === b.state && now.src === b.src) return;
        if (now.hasView && now.viewState !== now.state) return;  // the picture's update is still to come
        const t0 = p.t0, pic = gt.picture(r), changed = now.src !== b.src; p.t0 = null;
        (changed && pic && pic.tagName === 'IMG' ? pic.decode().catch(() => null) : Promise.resolve()).then(() =>
          requestAnimationFrame(() => setTimeout(() => {
            const v = gt.view(e), ms = performance.now() - t0;
            p.samples.push(ms); p.states.push(v.state); p.viewStates.push(v.viewState);
            p.changed.push(changed); p.via.push(via);
            if (gt.coming(v.state)) { p.waiting = {i: p.samples.length - 1, t0}; p.complete.push(null); finish(); }
            else p.complete.push(ms);
          }, 0)));
      };
      const finish = () => {  // the second step of a two-step redraw painted: its time from the key press
        const w = p.waiting, v = gt.view(e);
        if (!w || gt.coming(v.state) || (v.hasView && v.viewState !== v.state)) return;
        p.waiting = null;
        requestAnimationFrame(() => setTimeout(() => { p.complete[w.i] = performance.now() - w.t0; }, 0));
      };
      const onStatus = (_, status) => {
        if (p.t0 == null) return;
        if (status === 'busy') { p.busy = true; p.idle = false; return; }
        if (status !== 'idle' || !p.busy) return;
        p.idle = true;
        check('status');
      };
      const observer = new MutationObserver(() => { check('dom'); finish(); });  // 'dom': the idle came first
      observer.observe(r, {subtree: true, childList: true, attributes: true, characterData: true});
      r.addEventListener('keydown', onKey, {capture: true});
      k.statusChanged.connect(onStatus);
      gt._probeOff = () => {
        r.removeEventListener('keydown', onKey, {capture: true}); k.statusChanged.disconnect(onStatus); observer.disconnect();
      };
    },
  };
}
