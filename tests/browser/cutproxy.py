"""A loopback TCP proxy a test can cut: a student's network dropping out under a live page.

    with CutProxy(app_port) as proxy:        # listens on proxy.port, forwards to 127.0.0.1:app_port
        page.goto(f"{proxy.url}/r/{code}")
        proxy.hold()                          # new connections wait, unanswered (the network is down)
        proxy.cut()                           # every open connection is closed, both ends
        ...
        proxy.release()                       # the waiting connections go through, and new ones

A held connection is accepted and left waiting, as a browser's request waits on a network that does not
answer: the page's ``EventSource`` neither opens nor fails, so the page says it is reconnecting; on
``release`` the same request reaches the server. Threads, not asyncio: the test drives Playwright's
sync API on its own thread meanwhile.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class CutProxy:
    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self._target = (host, target_port)
        self._listener = socket.create_server((host, 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()  # both ends of every forwarded connection
        self._held: list[socket.socket] = []  # accepted while held: forwarded on release
        self._holding = False
        self._stopped = False
        self.accepted = 0  # connections accepted so far (a test can see the browser came back)
        self._accepting = threading.Thread(target=self._accept, name="cutproxy-accept", daemon=True)
        self._accepting.start()

    # -- the test's controls -------------------------------------------------------------------------

    def hold(self) -> None:
        """New connections are accepted and wait, unanswered, until ``release``."""
        with self._lock:
            self._holding = True

    def release(self) -> None:
        """Forward the waiting connections, and every new one from now on."""
        with self._lock:
            self._holding = False
            held, self._held = self._held, []
        for client in held:
            self._forward(client)

    def cut(self) -> int:
        """Close every open connection (both ends); new ones are still accepted. How many were cut."""
        with self._lock:
            sockets, self._open = self._open, set()
        for sock in sockets:
            _close(sock)
        return len(sockets) // 2

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            held, self._held = self._held, []
        _close(self._listener)
        self.cut()
        for sock in held:
            _close(sock)
        self._accepting.join(timeout=5)

    def __enter__(self) -> CutProxy:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the threads ---------------------------------------------------------------------------------

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # the listener closed: stop()
                return
            with self._lock:
                self.accepted += 1
                if self._stopped:
                    _close(client)
                    return
                if self._holding:
                    self._held.append(client)
                    continue
            self._forward(client)

    def _forward(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self._target, timeout=10)
            upstream.settimeout(None)
        except OSError:
            _close(client)
            return
        with self._lock:
            if self._stopped:
                _close(client)
                _close(upstream)
                return
            self._open |= {client, upstream}
        for source, sink in ((client, upstream), (upstream, client)):
            pump = threading.Thread(target=self._pump, args=(source, sink), name="cutproxy-pump", daemon=True)
            pump.start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        """Copy ``source`` to ``sink`` until either end closes, then close both (a cut wakes the
        blocked ``recv`` by shutting the socket down)."""
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        with self._lock:
            self._open -= {source, sink}
        _close(source)
        _close(sink)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
