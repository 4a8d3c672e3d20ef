"""A small Language Server Protocol client over stdio: JSON-RPC messages framed by
``Content-Length`` headers, as an editor sends them, to test ``jitfix server`` end to end."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from typing import Any, Callable

TIMEOUT = 60.0  # seconds for any one answer: the first analysis loads the rules


class LspClient:
    def __init__(self, cwd: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "jitfix", "server"], cwd=cwd, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages: queue.Queue[dict] = queue.Queue()
        self.notifications: list[dict] = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    return  # the server exited
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            self.messages.put(json.loads(stream.read(length)))

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _next(self, deadline: float) -> dict:
        try:
            return self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no answer from the server; its stderr: {self.stderr_so_far()}") from None

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._next(deadline)
            if message.get("id") == self.next_id and "method" not in message:
                assert "error" not in message, message["error"]
                return message.get("result")
            self._keep(message)

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def _keep(self, message: dict) -> None:
        if "method" in message and "id" in message:  # a request of the server's: answer it
            self._send({"id": message["id"], "result": None})
        elif "method" in message:
            self.notifications.append(message)

    def wait_for(self, method: str, accept: Callable[[dict], bool] = lambda params: True) -> dict:
        """The params of the first notification of ``method`` that ``accept`` takes (one
        already received counts; it is then consumed)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            for index, message in enumerate(self.notifications):
                if message["method"] == method and accept(message["params"]):
                    del self.notifications[index]
                    return message["params"]
            self._keep(self._next(deadline))

    def stderr_so_far(self) -> str:
        if self.process.poll() is None:
            return "(still running)"
        return self.process.stderr.read().decode(errors="replace")

    def shutdown(self) -> int:
        self.request("shutdown", None)
        self.notify("exit", None)
        return self.process.wait(timeout=TIMEOUT)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def apply_text_edits(text: str, edits: list[dict]) -> str:
    """The text with LSP edits applied (positions in UTF-16 code units, as the server was
    asked to count by default)."""
    lines = text.splitlines(keepends=True)

    def offset(position: dict) -> int:
        before = sum(len(line) for line in lines[:position["line"]])
        if position["line"] >= len(lines):
            return len(text)
        line = lines[position["line"]]
        units = 0
        for index, char in enumerate(line):
            if units >= position["character"]:
                return before + index
            units += 2 if ord(char) > 0xFFFF else 1
        return before + len(line)

    spans = sorted(((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"]) for e in edits),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text
