"""A small headless-Chromium driver for tests: the DevTools protocol over a pipe, no dependencies.

Chromium started with --remote-debugging-pipe reads protocol messages (JSON, each ended by a NUL
byte) from its fd 3 and writes replies and events to its fd 4. One background thread reads fd 4,
files replies by id and hands events to the Page they belong to (flattened sessions: every page
message carries its sessionId).

    with Chromium() as browser:
        page = browser.open(Path("report.html"), width=1280, height=900)
        page.console_errors, page.requests, page.evaluate("1 + 1"), page.screenshot(Path("a.png"))

The timeouts are safety nets against a hung browser, not performance checks.
"""
import base64
import fcntl
import json
import math
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

COMMAND_TIMEOUT = 30.0  # seconds for one protocol reply
LOAD_TIMEOUT = 60.0     # seconds for a page to load (load event, readyState, images)


def chromium_path():
    """The Chromium (or Chrome) executable on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


class JavaScriptError(BrowserError):
    pass


class Chromium:
    def __init__(self, executable=None):
        self.executable = executable or chromium_path()
        if not self.executable:
            raise BrowserError("no chromium, chromium-browser or google-chrome on PATH")
        self._cond = threading.Condition()
        self._replies = {}
        self._pages = {}   # sessionId -> Page
        self._next_id = 0
        self._eof = False
        self.proc = None

    def __enter__(self):
        self._tmp = Path(tempfile.mkdtemp(prefix="cb-chromium-"))
        self.args = [
            self.executable, "--headless=new", "--remote-debugging-pipe", "--disable-gpu",
            f"--user-data-dir={self._tmp / 'profile'}", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-breakpad", "--disable-dev-shm-usage", "--mute-audio",
            "--hide-scrollbars", "--password-store=basic", "--use-mock-keychain",
            # Nothing can be fetched from the network (requests are still reported, then fail at once).
            "--host-resolver-rules=MAP * ~NOTFOUND",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            self.args.append("--no-sandbox")  # Chromium refuses to run sandboxed as root
        self.args.append("about:blank")
        # Our ends: we write to `_to_browser` and read `_from_browser`. The child's ends are moved
        # to fds 3 and 4 between fork and exec; they are first duplicated to fds >= 10 (close-on-exec)
        # so the two dup2 calls cannot clobber each other. close_fds=False keeps 3 and 4 open; every
        # other descriptor Python opens is close-on-exec anyway.
        child_in, self._to_browser = os.pipe()
        self._from_browser, child_out = os.pipe()
        high_in, high_out = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (child_in, child_out))

        def move_pipe_fds():
            os.dup2(high_in, 3)
            os.dup2(high_out, 4)

        self._stderr = open(self._tmp / "stderr.txt", "wb")
        try:
            self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=self._stderr,
                                         stderr=self._stderr, preexec_fn=move_pipe_fds, close_fds=False,
                                         start_new_session=True)
        except OSError as e:
            for fd in (child_in, child_out, high_in, high_out, self._to_browser, self._from_browser):
                os.close(fd)
            self._stderr.close()
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise BrowserError(f"cannot start {self.executable}: {e}") from e
        for fd in (child_in, child_out, high_in, high_out):
            os.close(fd)
        self._reader = threading.Thread(target=self._read, name="chromium-cdp-reader", daemon=True)
        self._reader.start()
        try:
            self.send("Browser.getVersion")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            try:
                self.send("Browser.close", timeout=5)
            except BrowserError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        os.close(self._to_browser)
        self._reader.join(timeout=5)  # it has seen end-of-file: chromium is gone
        if not self._reader.is_alive():
            os.close(self._from_browser)
        self._stderr.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    def stderr_tail(self, lines=20):
        try:
            text = (self._tmp / "stderr.txt").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- protocol plumbing --

    def _read(self):
        buffer = b""
        try:
            while True:
                try:
                    chunk = os.read(self._from_browser, 1 << 16)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for raw in messages:
                    self._dispatch(json.loads(raw))
        finally:  # end of file (or a garbled message): wake every waiter with a clear error
            with self._cond:
                self._eof = True
                self._cond.notify_all()

    def _dispatch(self, message):
        with self._cond:
            if "id" in message:
                self._replies[message["id"]] = message
            else:
                page = self._pages.get(message.get("sessionId"))
                if page is not None:
                    page._on_event(message["method"], message.get("params", {}))
            self._cond.notify_all()

    def wait_for(self, condition, timeout, what):
        """Wait (reader thread events) until condition() is true; raise a clear error otherwise."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not condition():
                if self._eof:
                    try:
                        status = f"exit status {self.proc.wait(timeout=5)}"
                    except subprocess.TimeoutExpired:
                        status = "closed its pipe but is still running"
                    raise BrowserError(f"chromium stopped ({status}) while we waited for {what};"
                                       f" its stderr ends:\n{self.stderr_tail()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BrowserError(f"no {what} from chromium within {timeout:g} s (protocol safety timeout)")
                self._cond.wait(left)

    def send(self, method, params=None, session_id=None, timeout=COMMAND_TIMEOUT):
        with self._cond:
            self._next_id += 1
            call_id = self._next_id
        message = {"id": call_id, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        try:
            os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        except OSError as e:
            raise BrowserError(f"cannot send {method} to chromium ({e}); its stderr ends:\n{self.stderr_tail()}")
        self.wait_for(lambda: call_id in self._replies, timeout, f"reply to {method}")
        with self._cond:
            reply = self._replies.pop(call_id)
        if "error" in reply:
            raise BrowserError(f"{method} failed: {reply['error']}")
        return reply.get("result", {})

    # -- pages --

    def open(self, path, width=1280, height=900, timeout=LOAD_TIMEOUT):
        """A new tab of the given viewport size showing `path` (a file), once fully loaded."""
        url = Path(path).resolve().as_uri() if not str(path).startswith(("file:", "data:")) else str(path)
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session, width, height)
        with self._cond:
            self._pages[session] = page
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.send(f"{domain}.enable")
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        page.navigate(url, timeout)
        return page


class Page:
    def __init__(self, browser, target_id, session_id, width, height):
        self.browser, self.target_id, self.session_id = browser, target_id, session_id
        self.width, self.height = width, height
        self.console_errors = []  # console.error/assert, uncaught exceptions, error log entries
        self.requests = []        # every URL the page asked for
        self._loaded = False

    def send(self, method, params=None, timeout=COMMAND_TIMEOUT):
        return self.browser.send(method, params, self.session_id, timeout)

    def _on_event(self, method, params):  # called by the reader thread, under the browser's lock
        if method == "Page.loadEventFired":
            self._loaded = True
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            text = " ".join(str(arg.get("value", arg.get("description", arg.get("type"))))
                            for arg in params.get("args", []))
            self.console_errors.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            self.console_errors.append(f"uncaught exception: {text}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            self.console_errors.append(f"log ({entry.get('source')}): {entry['text']} {entry.get('url', '')}".strip())

    def navigate(self, url, timeout=LOAD_TIMEOUT):
        with self.browser._cond:
            self._loaded = False
        result = self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"cannot open {url}: {result['errorText']}")
        self.browser.wait_for(lambda: self._loaded, timeout, f"load event for {url}")
        # The load event may have been about:blank's; this also waits for the document and its images.
        settled = ("location.href !== 'about:blank' && document.readyState === 'complete'"
                   " && Array.from(document.images).every(img => img.complete)")
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.evaluate(settled):
                    return
            except BrowserError:  # e.g. the execution context went away mid-navigation
                if self.browser._eof:
                    raise
            if time.monotonic() > deadline:
                raise BrowserError(f"{url} did not settle (readyState, images) within {timeout:g} s")
            time.sleep(0.05)

    def evaluate(self, expression):
        """The value of a JavaScript expression (promises awaited); raises JavaScriptError if it throws."""
        result = self.send("Runtime.evaluate",
                           {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            raise JavaScriptError(f"{expression!r} threw: {text}")
        return result["result"].get("value")

    def screenshot(self, path, full_page=True):
        """Write a PNG of the viewport, or of the whole document when full_page."""
        params = {"format": "png"}
        if full_page:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params["captureBeyondViewport"] = True
            params["clip"] = {"x": 0, "y": 0, "scale": 1, "width": max(self.width, math.ceil(size["width"])),
                              "height": max(self.height, math.ceil(size["height"]))}
        data = self.send("Page.captureScreenshot", params)["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)

    def close(self):
        self.browser.send("Target.closeTarget", {"targetId": self.target_id})
        with self.browser._cond:
            self.browser._pages.pop(self.session_id, None)
