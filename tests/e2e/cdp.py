# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A minimal Chrome DevTools Protocol client for the end-to-end tests.

Drives Debian's headless Chromium over a websocket (Debian python3-websocket,
no pip packages): start the browser, open a page, evaluate JavaScript, take a
screenshot, and keep what the page complained about (console errors,
uncaught exceptions, alert() dialogs) so a test can assert there was none.
"""

import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

import websocket

CHROMIUM = "/usr/bin/chromium"

# Headless, offline and quiet: no first-run UI, no background fetches, no
# sandbox (the tests run as root, where Chromium refuses its sandbox).
# WebGL (speedscope draws with it) comes from SwiftShader, the software
# renderer Chromium ships, since there is no GPU.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
    "--window-size=1400,900", "--remote-debugging-port=0", "--remote-allow-origins=*",
]


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, timeout=30):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="bpfprof-chromium-")
        self.proc = None
        self.ws = None
        self.next_id = 0
        self.console = []     # (level, text)
        self.exceptions = []  # text of uncaught exceptions
        self.dialogs = []     # alert()/confirm() messages

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self):
        self.stderr = open(os.path.join(self.profile, "chromium.log"), "w+")
        self.proc = subprocess.Popen(
            [CHROMIUM] + CHROMIUM_FLAGS + ["--user-data-dir=" + self.profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr,
            start_new_session=True)
        # With port 0 Chromium picks a free port and writes it to this file.
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + self.timeout
        port = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("chromium exited with %s: %s" % (self.proc.returncode, self.log()))
            try:
                with open(port_file) as f:
                    port = int(f.readline())
                break
            except (OSError, ValueError):
                time.sleep(0.1)
        if port is None:
            raise RuntimeError("chromium did not open its DevTools port: " + self.log())
        page = None
        while time.monotonic() < deadline and page is None:
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=5) as r:
                targets = json.load(r)
            page = next((t for t in targets if t.get("type") == "page"), None)
            if page is None:
                time.sleep(0.1)
        if page is None:
            raise RuntimeError("chromium has no page target: " + self.log())
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=self.timeout,
                                              suppress_origin=True)
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable")

    def log(self):
        try:
            self.stderr.seek(0)
            return self.stderr.read()[-3000:]
        except (OSError, ValueError, AttributeError):
            return ""

    def _event(self, msg):
        method, params = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.console.append((params.get("type"), text))
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            self.exceptions.append(d.get("exception", {}).get("description") or d.get("text", ""))
        elif method == "Log.entryAdded":
            e = params.get("entry", {})
            self.console.append((e.get("level"), e.get("text", "")))
        elif method == "Page.javascriptDialogOpening":
            self.dialogs.append(params.get("message", ""))
            # An open dialog blocks the page: dismiss it, the message is kept.
            self.call("Page.handleJavaScriptDialog", accept=True, wait=False)

    def call(self, method, wait=True, **params):
        """Sends a command; returns its result (events that arrive meanwhile are recorded)."""
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        if not wait:
            return None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            self._event(msg)
        raise TimeoutError(method)

    def navigate(self, url):
        self.call("Page.navigate", url=url)

    def evaluate(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate %r: %s" % (expr, r["exceptionDetails"]))
        return r.get("result", {}).get("value")

    def wait_for(self, expr, timeout=None):
        """Polls a JavaScript expression until it is truthy; returns its last value."""
        deadline = time.monotonic() + (timeout or self.timeout)
        value = None
        while time.monotonic() < deadline:
            value = self.evaluate(expr)
            if value:
                return value
            time.sleep(0.2)
        return value

    def screenshot(self, path):
        r = self.call("Page.captureScreenshot", format="png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def close(self):
        if self.ws is not None:
            try:
                self.ws.close()
            except Exception:
                pass
            self.ws = None
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        if getattr(self, "stderr", None):
            self.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)
