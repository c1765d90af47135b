"""Drive the system Chromium headless through the DevTools protocol, with the stdlib only.

``chromium --remote-debugging-pipe`` reads protocol commands (JSON, each ended by a NUL
byte) on file descriptor 3 and answers on descriptor 4: no websocket, no Selenium, no
downloaded browser. :class:`Browser` opens one page, collects what a user would see go
wrong (uncaught exceptions, ``console.error``, failed loads) and every network request
the page makes, and evaluates JavaScript in it; tests click and type through the page's
own DOM, the way a user's events arrive.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _chromium import chromium

__all__ = ["Browser", "BrowserError", "browser"]


def _as_fds_3_and_4(read: int, write: int) -> None:
    """In the child: ``read`` becomes fd 3 and ``write`` fd 4 (copied above both first, so
    neither is overwritten when it already is 3 or 4)."""
    high_read, high_write = os.dup(read), os.dup(write)
    os.dup2(high_read, 3)
    os.dup2(high_write, 4)


class BrowserError(RuntimeError):
    """Chromium failed, timed out, or a script raised in the page."""


class Browser:
    """One headless Chromium page (:func:`browser` closes it when done).

    ``errors`` lists the page's uncaught exceptions and console errors, ``requests`` the
    URLs of every request it made (the page itself included).
    """

    def __init__(
        self,
        *,
        timeout: float = 60.0,
        width: int = 1280,
        height: int = 800,
        env: dict[str, str] | None = None,
    ) -> None:
        found = chromium()
        if found is None:
            msg = "no system Chromium (apt-get install chromium)"
            raise BrowserError(msg)
        self.timeout = timeout
        self.errors: list[str] = []
        self.requests: list[str] = []
        self._tmp = tempfile.TemporaryDirectory(prefix="gp-browser-")
        folder = Path(self._tmp.name)
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The child must see the pipes as fds 3 and 4: dup them there before exec.
        self._proc = subprocess.Popen(
            [
                found,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-pipe",
                f"--window-size={width},{height}",
                f"--user-data-dir={folder / 'profile'}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            # the tests drive one browser per process from one thread: preexec_fn is safe
            preexec_fn=lambda: _as_fds_3_and_4(to_browser_r, from_browser_w),  # noqa: PLW1509
            env=dict(os.environ, HOME=str(folder), **(env or {})),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next = 0
        self._events: list[dict[str, Any]] = []
        self._session = ""
        try:
            self._open_page()
        except BaseException:
            self.close()
            raise

    # -- protocol ------------------------------------------------------------------------

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                msg = "Chromium did not answer in time"
                raise BrowserError(msg)
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                msg = "Chromium closed the protocol pipe"
                raise BrowserError(msg)
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        found: dict[str, Any] = json.loads(message)
        return found

    def _note(self, event: dict[str, Any]) -> None:
        method = event.get("method")
        params = event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            self.errors.append(f"exception: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.errors.append(f"console.{params['type']}: {args}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(f"log: {params['entry'].get('text')}")
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        self._events.append(event)

    def send(self, method: str, params: dict[str, Any] | None = None, *, page: bool = True) -> Any:
        """Send one command (to the page's session unless ``page`` is False); its result."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if page:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self._next:
                if "error" in answer:
                    msg = f"{method}: {answer['error']}"
                    raise BrowserError(msg)
                return answer.get("result", {})
            self._note(answer)

    def wait_for(self, method: str) -> dict[str, Any]:
        """The next event ``method`` (events seen earlier count once)."""
        deadline = time.monotonic() + self.timeout
        for index, event in enumerate(self._events):
            if event.get("method") == method:
                del self._events[index]
                return event
        while True:
            event = self._read(deadline)
            self._note(event)
            if event.get("method") == method:
                self._events.remove(event)
                return event

    def _open_page(self) -> None:
        targets = self.send("Target.getTargets", page=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        attached = self.send(
            "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}, page=False
        )
        self._session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")

    # -- what tests use -------------------------------------------------------------------

    def open(self, path: Path) -> None:
        """Load a local file and wait until its ``load`` event fired."""
        self._events = [e for e in self._events if e.get("method") != "Page.loadEventFired"]
        self.send("Page.navigate", {"url": path.resolve().as_uri()})
        self.wait_for("Page.loadEventFired")

    def run(self, script: str) -> Any:
        """The JSON value of ``script`` (an expression; promises are awaited)."""
        result = self.send(
            "Runtime.evaluate",
            {"expression": script, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            msg = f"the page raised: {text}"
            raise BrowserError(msg)
        return result["result"].get("value")

    def click(self, x: float, y: float) -> None:
        """A real mouse click (press and release) at viewport coordinates."""
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            )

    def wheel(self, x: float, y: float, delta: float) -> None:
        """Turn the mouse wheel at viewport coordinates (``delta`` < 0: away, zoom in)."""
        self.send(
            "Input.dispatchMouseEvent",
            {"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": delta},
        )

    def drag(self, start: tuple[float, float], end: tuple[float, float], steps: int = 5) -> None:
        """Press the left button at ``start``, move to ``end``, release."""
        x, y = start
        self.send(
            "Input.dispatchMouseEvent",
            {"type": "mousePressed", "x": x, "y": y, "button": "left", "clickCount": 1},
        )
        for step in range(1, steps + 1):
            x = start[0] + (end[0] - start[0]) * step / steps
            y = start[1] + (end[1] - start[1]) * step / steps
            self.send(
                "Input.dispatchMouseEvent",
                {"type": "mouseMoved", "x": x, "y": y, "button": "left", "buttons": 1},
            )
        self.send(
            "Input.dispatchMouseEvent",
            {"type": "mouseReleased", "x": x, "y": y, "button": "left", "clickCount": 1},
        )

    def type(self, text: str) -> None:
        """Type ``text`` into the focused element, then press Enter."""
        self.send("Input.insertText", {"text": text})
        for kind in ("keyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13},
            )

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                os.write(self._to_browser, b'{"id": 0, "method": "Browser.close"}\0')
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._tmp.cleanup()


@contextlib.contextmanager
def browser(**options: Any) -> Iterator[Browser]:
    """A :class:`Browser`, closed (its process ended, its profile removed) on exit."""
    opened = Browser(**options)
    try:
        yield opened
    finally:
        opened.close()
