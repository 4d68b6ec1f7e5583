"""The built documentation works offline: its pages, opened from file:// in headless Chromium, request
nothing from another host, the animations' buttons have their icons, and the saved widget outputs
show their static fallback (the committed notebooks have one for each; checked without a build).

Runs after a build of the site (``python -m sphinx -W --keep-going -b html docs docs/_build/html``, as
in .ci/run; MBDCP_DOCS_HTML names another build directory) where Chromium is installed (Debian:
``apt-get install chromium``); skipped otherwise. The browser is driven through the DevTools protocol
over a pipe (--remote-debugging-pipe: no Python package, no port). Every request of a page is
recorded; any to a URL that is not file: or data: is answered with an error by the test itself
(Fetch domain) and, as a second barrier, every host name resolves to nothing
(--host-resolver-rules), so nothing leaves the machine; the test fails listing those URLs.
"""
import fcntl
import importlib.util
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HTML = Path(os.environ.get("MBDCP_DOCS_HTML") or ROOT / "docs" / "_build" / "html")
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# pages that must be checked (the notebooks with animations and progress bars); every other notebook
# page, and the site's top-level pages, are checked too
REQUIRED = ["index.html", "notebooks/05_box_on_floor.html", "notebooks/06_disk_pile.html",
            "notebooks/07_validation_template.html", "notebooks/12_parameter_study.html"]
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


def _browser():
    return next((path for path in map(shutil.which, BROWSERS) if path), None)


def _pages():
    if not (HTML / "index.html").is_file():
        return REQUIRED
    found = {str(p.relative_to(HTML)) for p in HTML.glob("*.html")} | {str(p.relative_to(HTML)) for p in HTML.glob("notebooks/*.html")}
    return REQUIRED + sorted(found - set(REQUIRED))


needs_site = [
    pytest.mark.skipif(not (HTML / "index.html").is_file(), reason=f"no built documentation in {HTML}"),
    pytest.mark.skipif(_browser() is None, reason="no Chromium (apt-get install chromium)"),
]


class DevTools:
    """Chromium, headless, driven through the DevTools protocol on file descriptors 3 and 4."""

    def __init__(self, executable, profile):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the browser reads commands on fd 3 and writes answers on fd 4: copies above 10 first, so
        # that the dup2 in the child cannot overwrite one with the other
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_r, from_browser_w)]

        def child():  # two dup2 calls only (async-signal-safe), between fork and exec
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self._stderr = os.path.join(profile, "stderr.txt")
        with open(self._stderr, "wb") as stderr:
            self.process = subprocess.Popen(
                [executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--remote-debugging-pipe", f"--user-data-dir={profile}", "--no-first-run",
                 "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--host-resolver-rules=MAP * ~NOTFOUND",
                 "about:blank"],
                stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr, pass_fds=(3, 4),
                preexec_fn=child)  # noqa: PLW1509
        for fd in [to_browser_r, from_browser_w] + high:
            os.close(fd)
        self._messages = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        buffer = b""
        while True:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                self._messages.put(None)
                return
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for message in messages:
                self._messages.put(json.loads(message))

    def _stderr_tail(self):
        with open(self._stderr, "rb") as fh:
            return fh.read()[-2000:].decode(errors="replace")

    def next_message(self, timeout):
        try:
            message = self._messages.get(timeout=timeout)
        except queue.Empty:
            return None
        if message is None:
            raise RuntimeError("Chromium closed the DevTools pipe:\n" + self._stderr_tail())
        return message

    def send(self, method, params=None, session=None):
        """Send a command without waiting; returns its id."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        return self._next_id

    def call(self, method, params=None, session=None, on_event=None, timeout=30.0):
        """Send a command and return its result; events that arrive meanwhile go to ``on_event``."""
        ident = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.next_message(deadline - time.monotonic())
            if message is None:
                break
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if on_event is not None and "method" in message:
                on_event(message)
        raise TimeoutError(f"no answer to {method} within {timeout} s")

    def close(self):
        try:
            self.send("Browser.close")
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)


class Page:
    """One page opened in its own tab, with every request it makes recorded."""

    def __init__(self, browser):
        self.browser = browser
        self.requests = []  # every URL the page requested
        self.remote = []  # those that would have left the machine (blocked)
        self.loaded = False
        self.last_request = time.monotonic()
        self.target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.call("Target.attachToTarget", {"targetId": self.target, "flatten": True})["sessionId"]
        for method, params in [("Fetch.enable", {"patterns": [{"urlPattern": "*"}]}), ("Network.enable", {}),
                               ("Network.setCacheDisabled", {"cacheDisabled": True}), ("Page.enable", {})]:
            self.call(method, params)

    def call(self, method, params=None, timeout=30.0):
        return self.browser.call(method, params, self.session, self._event, timeout)

    def _record(self, url):
        self.requests.append(url)
        self.last_request = time.monotonic()
        if not url.startswith(LOCAL_SCHEMES) and url not in self.remote:
            self.remote.append(url)

    def _event(self, message):
        if message.get("sessionId") != self.session:
            return
        method, params = message["method"], message.get("params", {})
        if method == "Fetch.requestPaused":
            url = params["request"]["url"]
            self._record(url)
            if url.startswith(LOCAL_SCHEMES):
                self.browser.send("Fetch.continueRequest", {"requestId": params["requestId"]}, self.session)
            else:
                self.browser.send("Fetch.failRequest", {"requestId": params["requestId"], "errorReason": "BlockedByClient"},
                                  self.session)
        elif method == "Network.requestWillBeSent":
            self._record(params["request"]["url"])
        elif method == "Network.webSocketCreated":
            self._record(params["url"])
        elif method == "Page.loadEventFired":
            self.loaded = True

    def pump(self, seconds):
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            message = self.browser.next_message(min(left, 0.1))
            if message is not None and "method" in message:
                self._event(message)

    def open(self, url, timeout=60.0, quiet=0.5):
        """Navigate, wait for the load event, then until no request was made for ``quiet`` seconds
        (scripts load more after the load event: MathJax its components, fonts when text is laid out)."""
        result = self.call("Page.navigate", {"url": url})
        assert not result.get("errorText"), f"{url}: {result['errorText']}"
        deadline = time.monotonic() + timeout
        while not self.loaded and time.monotonic() < deadline:
            self.pump(0.1)
        assert self.loaded, f"{url} did not load within {timeout} s"
        while time.monotonic() - self.last_request < quiet and time.monotonic() < deadline:
            self.pump(0.1)

    def evaluate(self, expression, timeout=30.0):
        result = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
                           timeout=timeout)
        if "exceptionDetails" in result:
            raise AssertionError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self):
        self.browser.call("Target.closeTarget", {"targetId": self.target})


@pytest.fixture(scope="module")
def browser():
    with tempfile.TemporaryDirectory(prefix="mbdcp-chromium-") as profile:
        devtools = DevTools(_browser(), profile)
        try:
            yield devtools
        finally:
            devtools.close()


# the icons of the buttons of matplotlib's JavaScript animations: each has a glyph (a ::before
# content from the icon font's style sheet) drawn with a font face that loads
ICONS = """(async () => {
  await document.fonts.ready;
  const icons = [...document.querySelectorAll('.anim-buttons i')];
  const result = {icons: icons.length, without_glyph: [], faces: [], family: null};
  for (const icon of icons) {
    const content = getComputedStyle(icon, '::before').content;
    if (!content || content === 'none' || content === 'normal') result.without_glyph.push(icon.className);
  }
  if (icons.length) {
    const style = getComputedStyle(icons[0]);
    result.family = style.fontFamily;
    const glyph = getComputedStyle(icons[0], '::before').content.replace(/^["']|["']$/g, '') || 'x';
    try {
      const faces = await document.fonts.load(style.fontWeight + ' 16px ' + style.fontFamily, glyph);
      result.faces = faces.map(f => ({family: f.family, status: f.status}));
    } catch (e) { result.error = String(e); }
  }
  return result;
})()"""


@pytest.mark.parametrize("name", _pages())
@needs_site[0]
@needs_site[1]
def test_page_loads_nothing_from_another_host(browser, name):
    path = HTML / name
    assert path.is_file(), f"{name} is missing from the build"
    page = Page(browser)
    try:
        page.open(path.as_uri())
        assert page.requests, "the page's own requests are recorded"
        if page.remote:
            pytest.fail(f"{name} requests from other hosts (the docs must work offline):\n  " + "\n  ".join(page.remote))
        # no widget output is rendered as a widget view (it needs the widget manager, not loaded):
        # each shows the static fallback saved beside it
        views = page.evaluate("document.querySelectorAll('script[type=\"application/vnd.jupyter.widget-view+json\"]').length")
        assert views == 0, f"{name}: {views} widget output(s) shown as a widget view, empty without the widget manager"
        if "anim-buttons" in path.read_text(encoding="utf-8", errors="replace"):
            icons = page.evaluate(ICONS)
            assert icons["icons"] > 0, icons
            assert not icons["without_glyph"], f"{name}: animation buttons without an icon: {icons}"
            assert icons["faces"] and all(f["status"] == "loaded" for f in icons["faces"]), \
                f"{name}: the buttons' icon font does not load: {icons}"
    finally:
        page.close()


@needs_site[0]
def test_animation_pages_are_checked():
    # the icon check above runs on the notebook pages with animations; they must exist
    assert any("anim-buttons" in (HTML / name).read_text(encoding="utf-8", errors="replace")
               for name in REQUIRED if (HTML / name).is_file())


def test_committed_widget_outputs_have_their_static_fallback():
    # every widget output of the committed notebooks carries the text (and image) that
    # notebooks/build.py derives from the widget's final state: the site, which loads no widget
    # manager, shows it. A notebook executed and saved otherwise: python notebooks/build.py NAME
    nbformat = pytest.importorskip("nbformat")
    spec = importlib.util.spec_from_file_location("mbdcp_notebooks_build", ROOT / "notebooks" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    stale = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        views = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if build.WIDGET_VIEW in o.get("data", {})]
        missing = [o for o in views if not {"text/plain", "text/html", "image/png", "image/svg+xml"} & set(o["data"])]
        if missing or build.add_widget_fallbacks(nb):
            stale.append(path.name)
    assert not stale, f"widget outputs without their static fallback in {stale}: rebuild with notebooks/build.py"
