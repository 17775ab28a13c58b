"""Every lesson in a real JupyterLab, in headless Chromium: it runs, its widgets are live, and
they react. nbval proves the code runs; only a browser shows whether a widget renders.

Needs Debian's `chromium` and the `playwright` Python package (no browser download: the system
Chromium is used). Without them the test is skipped — except in CI (CI=true), where that is a
failure. Screenshots of every widget go to reports/browser/ for humans to look at.

Each widget must react where a student looks: moving one of its controls changes its output
(the text and pictures around the controls, not the control itself), and no label, button or
read-out is cut off (an element whose text is wider than its box, the "Cache this pro…" that
ipywidgets draws when a description does not fit).

It also checks what a student sees before running anything (each stored widget output shows
the note "Run this cell to see the widget.", no news pop-up: JupyterLab runs with the course's
own settings, jupyter-config/) and that Chinese text renders as characters, not as the empty
boxes ("tofu") a browser draws when no installed font has them (Debian package fonts-noto-cjk).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from course.notebooks import WIDGET_NOTE

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# The Chinese edition (zh-CN/): these lessons run like the English ones, these labs run unsolved;
# both must show Chinese prose, rendered (no tofu), and the labs' tally in Chinese. The newest
# lesson is among them, so that a new widget's labels are measured in both languages.
CHINESE_LESSONS = [ROOT / "zh-CN" / "notebooks" / name
                   for name in ("01_agent_loop.ipynb", "04_compaction.ipynb", "05_prompt_caching.ipynb",
                                "10_prompt_injection.ipynb", LESSONS[-1].name)]
CHINESE_LABS = [ROOT / "zh-CN" / "labs" / f"{name}.ipynb"
                for name in ("01_agent_loop_lab", "06_notetool_lab")]
SHOTS = ROOT / "reports" / "browser"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"  # how a stored output says "a widget was here"
STALL_S = 300  # Run All fails only when no cell has finished for this long (not a total limit)
VIEWPORT = {"width": 1400, "height": 1000}
TIMINGS: dict[str, float] = {}

pytestmark = pytest.mark.browser


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed"
    if not CHROMIUM:
        return "Chromium is not installed (Debian package chromium)"
    return None


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    reason = _missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"browser test cannot run in CI: {reason}")
        pytest.skip(reason)
    # JupyterLab autosaves: give it copies, so running lessons never rewrites the repository.
    root = tmp_path_factory.mktemp("lab-root")
    for folder in ("notebooks", "data", "zh-CN"):
        shutil.copytree(ROOT / folder, root / folder)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = "course-browser-test"
    # JupyterLab 4 detaches cells scrolled out of view ("windowing"); the test must see them all.
    settings = root / "lab-settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    # The course's own settings (no news pop-up), as ./run.sh lab gives them to JupyterLab.
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(root / "lab-settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(root / "lab-workspaces"),
               JUPYTER_CONFIG_PATH=str(ROOT / "jupyter-config"))
    log = (root / "jupyter.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
         f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={root}"],
        stdout=log, stderr=subprocess.STDOUT, cwd=root, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("JupyterLab did not start: see " + str(root / "jupyter.log"))
            time.sleep(0.5)
    yield url, token
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def browser(lab_server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()
    if TIMINGS:
        print("\nbrowser test, seconds per lesson: " +
              ", ".join(f"{name} {seconds:.1f}" for name, seconds in TIMINGS.items()))


def expected_widgets(path: Path) -> int:
    nb = nbformat.read(path, as_version=4)
    return sum(1 for c in nb.cells if c.cell_type == "code"
               for o in c.get("outputs", []) if WIDGET_MIME in o.get("data", {}))


def start_kernel(page) -> None:
    """Accept the kernel JupyterLab proposes (if it asks) and wait until the kernel is idle."""
    select = page.get_by_role("button", name="Select", exact=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if select.count() and select.first.is_visible():
            select.first.click()
        if page.get_by_text(re.compile(r"ipykernel\) \| Idle")).count():
            return
        time.sleep(0.5)
    raise AssertionError("the kernel did not start within 120 s")


def unrun_widget_texts(page) -> list[str]:
    """What the stored widget outputs show before the lesson runs (the notebook is not trusted
    yet, so JupyterLab shows their text/plain)."""
    return page.eval_on_selector_all(
        ".jp-OutputArea-output[data-mime-type='text/plain']",
        "nodes => nodes.map(n => n.innerText.trim())")


# Draws each character of a sample alone on a canvas, in each font the page uses (prose, outputs,
# code), and compares the pixels with those of a codepoint no font has (U+0378, unassigned): the
# browser draws that as its "missing glyph" box, and it draws a Chinese character the same way
# when no installed font has it. Returns, per font, the characters drawn as that box.
TOFU_PROBE = r"""
([sample, missing]) => {
    const pick = selector => {
        const el = document.querySelector(selector);
        if (!el) return null;
        const style = getComputedStyle(el);
        return `${style.fontSize} ${style.fontFamily}`;
    };
    const fonts = {prose: pick('.jp-RenderedMarkdown'), output: pick('.jp-OutputArea-output pre'),
                   code: pick('.jp-Cell .cm-content')};
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 64;
    const ctx = canvas.getContext('2d', {willReadFrequently: true});
    const pixels = (font, text) => {
        ctx.clearRect(0, 0, 64, 64);
        ctx.font = font.replace(/^[\d.]+px/, '32px');
        ctx.textBaseline = 'top';
        ctx.fillText(text, 4, 4);
        return Array.from(ctx.getImageData(0, 0, 64, 64).data.filter((_, i) => i % 4 === 3)).join();
    };
    const report = {};
    for (const [role, font] of Object.entries(fonts)) {
        if (!font) continue;
        const box = pixels(font, missing);
        const drawn = [...sample].map(ch => pixels(font, ch));
        report[role] = {
            font,
            latin_differs_from_box: pixels(font, 'A') !== box,
            boxes: [...sample].filter((ch, i) => drawn[i] === box),
            distinct: new Set(drawn).size,
        };
    }
    return report;
}
"""
CJK_SAMPLE = "上下文工程中"


def tofu(page) -> dict[str, str]:
    """For each font the page uses, why its Chinese text is boxes; empty when it renders."""
    problems = {}
    for role, found in page.evaluate(TOFU_PROBE, [CJK_SAMPLE, "\u0378"]).items():
        assert found["latin_differs_from_box"], f"the tofu probe does not work for {found['font']}"
        if found["boxes"] or found["distinct"] < len(CJK_SAMPLE):
            problems[role] = (f"{found['font']}: {''.join(found['boxes']) or CJK_SAMPLE} drawn as "
                              f"the missing-glyph box ({found['distinct']} distinct shapes for "
                              f"{len(CJK_SAMPLE)} characters)")
    return problems


PROMPTS = """() => {
    const prompts = [...document.querySelectorAll('.jp-Notebook .jp-InputArea-prompt')];
    const code = prompts.filter(p => p.closest('.jp-CodeCell'));
    return [code.length, code.filter(p => /\\[\\d+\\]/.test(p.textContent)).length];
}"""


def run_all_cells(page) -> None:
    """Run All, then wait until every code cell has its number (busy cells show [*]). A slow
    machine makes a lesson slow, not wrong: the wait ends in failure only when no cell has
    finished for STALL_S seconds, however long the whole lesson takes."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name=re.compile(r"^Run All Cells")).click()
    done_before, last_progress = -1, time.monotonic()
    while True:
        total, done = page.evaluate(PROMPTS)
        if total and done == total:
            return
        if done != done_before:
            done_before, last_progress = done, time.monotonic()
        elif time.monotonic() - last_progress > STALL_S:
            raise AssertionError(f"Run All stalled: {done} of {total} code cells finished, none "
                                 f"for {STALL_S} s")
        page.wait_for_timeout(500)


def error_outputs(where) -> list[str]:
    """Tracebacks shown in `where` (the page, or one widget: its Output areas)."""
    texts = where.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']") \
        .evaluate_all("nodes => nodes.map(n => n.innerText)")
    return [t[:500] for t in texts if re.search(r"Traceback|Error\b|Exception\b", t)]


def screenshot(page, element, path: Path) -> None:
    """A picture of the element. JupyterLab scrolls inside its notebook panel, so an element
    taller than the window would come out cut and patched: the window grows to fit it."""
    box = element.bounding_box()
    tall = box is not None and box["height"] > VIEWPORT["height"] - 200
    if tall:
        page.set_viewport_size({"width": VIEWPORT["width"], "height": int(box["height"]) + 300})
        element.scroll_into_view_if_needed()
    try:
        element.screenshot(path=str(path))
    finally:
        if tall:
            page.set_viewport_size(VIEWPORT)
            element.scroll_into_view_if_needed()


CONTROLS = ((".widget-toggle-button:not(.mod-active):not([disabled])", "click"),
            (".widget-button:not([disabled]):not(.widget-toggle-button)", "click"),
            (".noUi-handle, .slider-container input, input[type=range]", "slide"),
            ("select", "select"),
            ("textarea, input[type=text]", "type"))
# What a widget shows apart from its controls: its HTML, Output areas, pictures and read-out
# labels. A control (with its own description and read-out) is taken out before comparing, so
# that a slider which moves over an output that stays the same counts as no change.
OUTPUT_OF = """el => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll('.widget-slider, .widget-hslider, .widget-vslider, .widget-text, '
        + '.widget-textarea, .widget-dropdown, .widget-select, .widget-select-multiple, '
        + '.widget-radio, .widget-checkbox, .widget-button, .widget-toggle-button, '
        + '.widget-toggle-buttons, .widget-play, .widget-upload').forEach(n => n.remove());
    return copy.innerHTML;
}"""
# Labels, buttons and read-outs cut off: ipywidgets clips their text with an ellipsis, so the
# text is wider (scrollWidth) than the box that shows it (clientWidth). A dropdown clips its
# chosen option without saying so: that text is measured in the dropdown's font instead.
CUT_OFF = """el => {
    const cut = [...el.querySelectorAll('.widget-label, .widget-label-basic, .widget-readout, '
            + '.jupyter-button, .widget-toggle-button, .widget-checkbox label')]
        .filter(n => n.clientWidth > 0 && n.scrollWidth > n.clientWidth)
        .map(n => `${(n.innerText || n.title || '').trim()} (${n.scrollWidth} px of text in ${n.clientWidth} px)`);
    for (const select of el.querySelectorAll('select:not([multiple])')) {
        const chosen = select.options[select.selectedIndex];
        if (!chosen || select.clientWidth === 0) continue;
        const style = getComputedStyle(select);
        const probe = document.createElement('span');
        probe.style.cssText = 'position:absolute;visibility:hidden;white-space:pre';
        probe.style.font = style.font;
        probe.textContent = chosen.text;
        document.body.appendChild(probe);
        const text = Math.ceil(probe.getBoundingClientRect().width);
        probe.remove();
        const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        if (text > room) cut.push(`${chosen.text} (${text} px of text in ${Math.floor(room)} px)`);
    }
    return cut;
}"""
KERNEL_IDLE = re.compile(r"ipykernel\) \| Idle")
QUIET_S = 3  # the kernel idle this long after a control moved: the widget has done what it will
# A student reads before moving a control. A widget whose model server the lesson stopped still
# answers for a few seconds, over the connection its client keeps open (httpx closes an idle
# one after 5 s), then never again: the test reads as long before it moves anything.
READ_S = 8


def progress_bar_only(widget) -> bool:
    """A progress bar (lesson 11 shows one while a long cell works) is read, not used: it has
    no control to try, only a bar that must have reached its end."""
    return (widget.locator(".widget-hprogress, .widget-vprogress").count() > 0
            and not any(widget.locator(selector).count() for selector, _ in CONTROLS))


def use(control, action: str) -> None:
    """Use one control as a person would."""
    if action == "click":
        control.click()
    elif action == "slide":
        # A slider that starts at its maximum (a "show up to request N" slider) moves left.
        now, top = control.get_attribute("aria-valuenow"), control.get_attribute("aria-valuemax")
        key = "ArrowLeft" if now is not None and top is not None and float(now) >= float(top) else "ArrowRight"
        control.focus()
        control.press(key)
        control.press(key)
    elif action == "select":
        options = control.locator("option")
        control.select_option(index=1 if options.count() > 1 else 0)
    else:  # Tab leaves the box: a text box that waits for its edit to end (continuous_update=False) sends it
        control.fill("The quick brown fox. 上下文工程 {\"path\": \"a/b.txt\"}")
        control.press("Tab")


def output_changed(page, widget, before: str) -> bool:
    """Whether the widget's output differs from `before` once the kernel has settled (idle for
    QUIET_S seconds): a slow recomputation is waited for however long it takes, and a
    half-drawn output in between does not count."""
    quiet_since = None
    started = time.monotonic()
    while True:
        idle = page.get_by_text(KERNEL_IDLE).count() > 0
        now = time.monotonic()
        if not idle:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since > QUIET_S and now - started > QUIET_S:
            return widget.evaluate(OUTPUT_OF) != before
        if now - started > STALL_S:
            raise AssertionError(f"the kernel was busy for {STALL_S} s after a control moved")
        page.wait_for_timeout(250)


def interact(page, widget) -> list[str]:
    """Use the widget's controls, one of each kind in turn, until one changes its output (a
    console changes it only when its Run button is pressed after a choice). Returns the
    controls tried; fails when none of them changed anything."""
    tried = []
    for selector, action in CONTROLS:
        control = widget.locator(selector).first
        if control.count() == 0 or not control.is_visible():
            continue
        before = widget.evaluate(OUTPUT_OF)
        use(control, action)
        tried.append(f"{action} {selector.split(',')[0]}")
        if output_changed(page, widget, before):
            return tried
    if not tried:
        raise AssertionError("the widget has no control a person could use")
    raise AssertionError(f"a control changes nothing: the widget's output stayed the same after "
                         f"each of {tried}")


def open_notebook(browser, lab_server, path: Path):
    """A new page showing the notebook at `path` (inside the repository) in JupyterLab."""
    url, token = lab_server
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(120_000)
    where = path.relative_to(ROOT).as_posix()
    # A fresh workspace per notebook: JupyterLab would otherwise reopen earlier tabs.
    page.goto(f"{url}/lab/workspaces/test-{shot_name(path)}/tree/{where}?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", state="attached")
    return page


def shot_name(path: Path) -> str:
    return f"zh-CN-{path.stem}" if "zh-CN" in path.parts else path.stem


CHINESE_PROSE = re.compile(r"[\u4e00-\u9fff]")


def chinese_share(page) -> float:
    """The share of the notebook's Markdown cells whose rendered text has Chinese in it."""
    texts = page.eval_on_selector_all(".jp-MarkdownCell .jp-RenderedMarkdown",
                                      "nodes => nodes.map(n => n.innerText)")
    return sum(bool(CHINESE_PROSE.search(t)) for t in texts) / max(len(texts), 1)


@pytest.mark.parametrize("path", LESSONS + CHINESE_LESSONS, ids=shot_name)
def test_lesson_runs_and_its_widgets_are_live(lab_server, browser, path):
    started = time.monotonic()
    page = open_notebook(browser, lab_server, path)
    name = shot_name(path)
    try:
        expected = expected_widgets(path)
        if expected:  # before anything runs: a short note where each widget will be, no repr
            page.wait_for_function(
                "([note, n]) => [...document.querySelectorAll('.jp-OutputArea-output')]"
                ".filter(o => o.innerText.trim() === note).length >= n", arg=[WIDGET_NOTE, expected])
            texts = unrun_widget_texts(page)
            assert texts.count(WIDGET_NOTE) == expected
            assert not [t for t in texts if t.startswith(("VBox(", "HBox("))], "a widget repr shows"
        start_kernel(page)
        run_all_cells(page)
        assert error_outputs(page) == [], f"{path.name} shows errors in the browser"
        assert page.get_by_text("Error displaying widget").count() == 0
        assert page.get_by_text(re.compile("Jupyter news")).count() == 0, "the news pop-up shows"
        assert tofu(page) == {}, "Chinese text renders as boxes: install fonts-noto-cjk"
        if "zh-CN" in path.parts:
            assert chinese_share(page) > 0.9, "the Chinese edition's prose is not Chinese"
            page.locator(".jp-Notebook .jp-Cell").first.scroll_into_view_if_needed()
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"{name}-top.png"))
        # A live widget view is a panel of .jupyter-widgets elements; a dead one is plain text.
        live = page.locator(".jp-OutputArea-output:has(> .jupyter-widgets)")
        page.wait_for_function(
            "n => document.querySelectorAll('.jp-OutputArea-output > .jupyter-widgets').length >= n",
            arg=expected)
        assert live.count() == expected, f"expected {expected} live widgets, found {live.count()}"
        SHOTS.mkdir(parents=True, exist_ok=True)
        if expected:
            page.wait_for_timeout(READ_S * 1000)
        for n in range(expected):
            widget = live.nth(n)
            widget.scroll_into_view_if_needed()
            screenshot(page, widget, SHOTS / f"{name}-widget-{n + 1}.png")
            assert widget.evaluate(CUT_OFF) == [], f"widget {n + 1}: labels cut off"
            if progress_bar_only(widget):
                width = widget.locator(".progress-bar").first.evaluate("bar => bar.style.width")
                assert width == "100%", f"a progress bar stopped at {width}"
                continue
            interact(page, widget)
            screenshot(page, widget, SHOTS / f"{name}-widget-{n + 1}-after.png")
            assert error_outputs(widget) == [], f"widget {n + 1} shows an error after a control moved"
            assert widget.evaluate(CUT_OFF) == [], f"widget {n + 1}: labels cut off after a control moved"
    except Exception:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}-FAILED.png"))  # what the browser showed
        raise
    finally:
        TIMINGS[name] = time.monotonic() - started
        page.close()
    (SHOTS / "timings.json").write_text(json.dumps(TIMINGS, indent=1))


TALLY = re.compile(r"\d+ of \d+ checks pass")
CHINESE_TALLY = re.compile(r"\d+ 个检查项中通过了 \d+ 个")   # the catalogue's (course/locale)


@pytest.mark.parametrize("path", CHINESE_LABS, ids=shot_name)
def test_a_chinese_lab_runs_unsolved_and_reports_in_chinese(lab_server, browser, path):
    """A student opens the Chinese lab and runs it before writing anything: every check
    reports (no error stops Run All), the prose and the tally are Chinese, nothing is tofu."""
    started = time.monotonic()
    page = open_notebook(browser, lab_server, path)
    name = shot_name(path)
    try:
        start_kernel(page)
        run_all_cells(page)
        assert error_outputs(page) == [], f"{path.name} shows errors in the browser"
        assert tofu(page) == {}, "Chinese text renders as boxes: install fonts-noto-cjk"
        assert chinese_share(page) > 0.9, "the Chinese edition's prose is not Chinese"
        outputs = "\n".join(page.eval_on_selector_all(".jp-OutputArea-output",
                                                       "nodes => nodes.map(n => n.innerText)"))
        assert "✗" in outputs, "the unsolved lab's checks did not report"
        assert CHINESE_TALLY.search(outputs) and not TALLY.search(outputs), \
            "the Chinese edition's tally is not in Chinese (course.i18n did not see the zh-CN folder)"
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}-end.png"))
    except Exception:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}-FAILED.png"))
        raise
    finally:
        TIMINGS[name] = time.monotonic() - started
        page.close()
