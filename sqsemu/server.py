"""Build the ASGI app from a :class:`~sqsemu.config.Config`, serve it with uvicorn, or run it in a thread.

- :func:`build` wires clock -> broker -> app and returns all three.
- :func:`run` serves in the foreground until Ctrl-C / SIGTERM and then returns normally (exit status 0); it returns
  ``STARTUP_FAILED_EXIT_STATUS`` (1) when the address cannot be listened on, and in durable mode it also stops
  when the store fails, returning ``STORE_FAILED_EXIT_STATUS`` (3). It sets up logging
  (``--log-level``, ``--log-format``: :mod:`sqsemu.observability.logformat`) and then logs the configuration file's
  warnings (``Config.file_warnings``).
- :class:`ServerThread` serves in a background thread on a free port: for in-process tests. Its ``sqsemu.*`` log
  records go wherever the host program's logging sends them.

Once listening, either logs the start-up banner (:mod:`sqsemu.observability.banner`).

Imports of uvicorn, the app and the engine happen inside the functions so that ``import sqsemu`` and
``sqsemu --help`` stay fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from sqsemu import gcpause
from sqsemu.config import Config

if TYPE_CHECKING:
    import uvicorn

    from sqsemu.clock import Clock
    from sqsemu.engine.broker import Broker
    from sqsemu.http.sqsprotocol import Lane
    from sqsemu.persistence import Store
    from sqsemu.security.tls import TLSFiles

__all__ = [
    "STARTUP_FAILED_EXIT_STATUS",
    "STORE_FAILED_EXIT_STATUS",
    "ASGIApp",
    "ServerThread",
    "build",
    "make_clock",
    "run",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

T = TypeVar("T")

STARTUP_TIMEOUT_S = 30.0
STARTUP_FAILED_EXIT_STATUS = 1
"""The exit status of ``sqsemu`` when it cannot start with valid settings: the address cannot be listened on (the
port is in use, the host is not an address of this machine or does not resolve), the data folder cannot be used,
or a declared queue conflicts with a restored one. (Invalid settings are usage errors: exit status 2.)"""
STORE_FAILED_EXIT_STATUS = 3
"""The exit status of ``sqsemu`` after its durable store failed (a commit or a journal call): restart it, and it
starts from what is on disk."""


def make_clock(config: Config) -> Clock:
    """The clock that ``config.clock`` names: ``SystemClock()`` or ``ManualClock()``."""
    from sqsemu.clock import ManualClock, SystemClock

    if config.clock == "manual":
        return ManualClock()
    return SystemClock()


def build(config: Config) -> tuple[ASGIApp, Broker, Clock]:
    """Wire one server: returns ``(app, broker, clock)``.

    The clock is chosen by ``config.clock``; the broker runs on it; the app's lifespan starts and closes the
    broker, so the app must be served with lifespan enabled. ``config.load_state`` names a saved state that replaces
    the state (the one restored from ``config.data_dir`` too) before the declarations apply; a file that cannot be
    loaded raises ``StateError`` (``sqsemu.state.form``) before anything is made.
    """
    from sqsemu.declare import apply_declarations
    from sqsemu.engine.broker import Broker
    from sqsemu.http.app import create_app

    state = None
    if config.load_state:  # --load-state: read and checked in full before anything is made (docs/state.md)
        from sqsemu.state.load import read_state_file

        state = read_state_file(config.load_state, config)
    clock = make_clock(config)
    broker = Broker(clock, strict=config.fidelity == "strict")
    if config.realism or config.realism_seed:
        broker.set_realism(config.realism, config.realism_seed)
    store = None
    restored = 0
    if config.data_dir:
        from sqsemu.persistence.sqlite import SQLiteStore

        store = SQLiteStore.open(config.data_dir, fsync=config.fsync)
    try:
        if store is not None:
            from sqsemu.security.iam import check_restored

            store.restore(broker)
            check_restored(broker, config)  # a queue policy that does not parse: never served open
            restored = len(broker.all_queues())
            store.attach(broker)
        if state is None:  # else the app applies them after the loaded state
            apply_declarations(broker, config)
        # The app restores SNS topics from the store and applies the [[topics]] declarations (after the queues).
        app: ASGIApp = create_app(config, broker, clock, store, restored_queues=restored, initial_state=state)
        if store is not None:
            store.commit_pending()
    except BaseException:
        if store is not None:
            store.close(commit=False)  # a start-up that fails changes nothing and leaves the data folder free
        raise
    return app, broker, clock


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _uvicorn_config(
    config: Config, app: ASGIApp, log_config: dict[str, Any] | None = None, tls: TLSFiles | None = None
) -> uvicorn.Config:
    """uvicorn's settings for ``config``: sqsemu's own HTTP protocol (``sqsemu.http.sqsprotocol``: the SQS calls
    answered directly; request-read deadline ``config.request_timeout``, request-head cap, 503 beyond
    ``config.max_connections``) or, when it cannot serve, uvicorn's h11 protocol with the read deadline; a bounded
    graceful shutdown. ``log_config`` None configures no logging at all (uvicorn's loggers then go through the host
    program's, as sqsemu's do); uvicorn's access log stays off: the app writes its own access lines
    (``--access-log``). ``tls`` (``--tls``, :func:`sqsemu.security.tls.prepare`): uvicorn wraps the socket in TLS
    with these files (``ssl_certfile``, ``ssl_keyfile``); the protocol reads the decrypted bytes, the same rules."""
    return _serving(config, app, log_config, tls)[0]


def _serving(
    config: Config, app: ASGIApp, log_config: dict[str, Any] | None = None, tls: TLSFiles | None = None
) -> tuple[uvicorn.Config, Lane | None]:
    """:func:`_uvicorn_config`, and the :class:`~sqsemu.http.sqsprotocol.Lane` of sqsemu's protocol (None when
    uvicorn's h11 protocol serves)."""
    import uvicorn

    from sqsemu.http.limits import MAX_HEADER_BYTES
    from sqsemu.http.serving import SHUTDOWN_GRACE_S

    http, lane = _http_protocol(config, app)
    uv = uvicorn.Config(
        app,
        host=config.host,
        port=config.port,
        loop="uvloop" if _have("uvloop") else "asyncio",
        http=http,
        ws="none",
        lifespan="on",
        log_level=config.log_level.lower(),
        access_log=False,
        server_header=False,
        # uvicorn counts the connection being refused itself: +1 lets max_connections connections in. sqsemu's
        # protocol counts them itself (and hands uvicorn's protocol only connections it already counted).
        limit_concurrency=None if lane is not None else config.max_connections + 1,
        # Proxy headers: sqsemu's protocol believes them only from --forwarded-allow-ips (sqsemu.security.forwarded);
        # uvicorn's middleware, for its own protocols (the h11 fallback), only from the same list, never by default.
        proxy_headers=lane is None and bool(config.forwarded_allow_ips),
        forwarded_allow_ips=config.forwarded_allow_ips or None,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        log_config=log_config,
        # --tls: TLS is the transport, uvicorn's (the listening socket's); OpenSSL's default ciphers (an older
        # uvicorn's default "TLSv1" would leave TLS 1.2 clients only CBC suites).
        ssl_certfile=tls.certfile if tls is not None else None,
        ssl_keyfile=tls.keyfile if tls is not None else None,
        ssl_ciphers=None,
    )
    if lane is not None:
        lane.keep_alive_s = float(uv.timeout_keep_alive)
    return uv, lane


def _http_protocol(config: Config, app: ASGIApp) -> tuple[Any, Lane | None]:
    """uvicorn's ``http=`` setting and the lane: sqsemu's own protocol (``sqsemu.http.sqsprotocol``) when httptools
    is installed and the installed uvicorn has what the hand-over to its protocol needs
    (``sqsemu.http.lanecheck``); else, with one warning line, uvicorn's h11 protocol with the read deadline of
    ``sqsemu.http.h11guard`` (h11 caps the head itself, ``h11_max_incomplete_event_size``), every request through
    the ASGI cycle. The app's ``lane`` state learns which."""
    from sqsemu.http.app import SQSApp
    from sqsemu.http.lanecheck import protocol_unavailable
    from sqsemu.http.limits import MAX_HEADER_BYTES

    state = getattr(app, "lane", None)
    reason = protocol_unavailable() if _have("httptools") else HTTPTOOLS_MISSING
    if reason is None and not isinstance(app, SQSApp):
        reason = "the app is not sqsemu's"  # pragma: no cover - build() makes an SQSApp
    fast = reason is None
    if reason is None and config.log_level == "trace":
        reason = "--log-level trace wraps the app in uvicorn's message logger"
    if fast and isinstance(app, SQSApp):
        from sqsemu.http.sqsprotocol import Lane, protocol_factory
        from sqsemu.security.forwarded import TrustedProxies

        trusted = TrustedProxies(config.forwarded_allow_ips) if config.forwarded_allow_ips else None
        lane = Lane(app, config.request_timeout, MAX_HEADER_BYTES, 5.0, config.max_connections, app.lane, trusted)
        if reason is None:
            app.lane.status = "on"
        else:  # every request through the ASGI app (uvicorn's message logger), with this protocol's rules
            lane.fast = False
            logging.getLogger("sqsemu.http").warning(
                "HTTP fast lane off: %s; every request takes the ASGI path", reason
            )
            app.lane.status = f"off: {reason}"
        return protocol_factory(lane), lane
    logging.getLogger("sqsemu.http").warning("HTTP fast lane off: %s; every request takes the ASGI path", reason)
    if state is not None:
        state.status = f"off: {reason}"
    if _have("httptools"):
        return "httptools", None  # uvicorn's protocol alone, without the read deadline or head cap: said above
    from sqsemu.http.lanecheck import h11_guard_unavailable

    h11_reason = h11_guard_unavailable()
    if h11_reason is not None:
        logging.getLogger("sqsemu.http").warning("no request-read deadline (h11): %s", h11_reason)
        return "h11", None
    from sqsemu.http.h11guard import guarded_h11_protocol

    return guarded_h11_protocol(config.request_timeout), None


HTTPTOOLS_MISSING = "httptools is not installed (uvicorn serves HTTP with h11)"


def _announce(
    app: ASGIApp, config: Config, server: uvicorn.Server, lane: Lane | None, tls: TLSFiles | None = None
) -> None:
    """Tell the app the server listens (it logs the banner, with ``tls``'s lines) and how to count open
    connections."""
    from sqsemu.http.app import SQSApp

    if not isinstance(app, SQSApp):
        return
    port = config.port
    servers = getattr(server, "servers", None)
    if servers and servers[0].sockets:
        port = int(servers[0].sockets[0].getsockname()[1])
    note = None
    if tls is not None:
        from sqsemu.security.tls import note as tls_note

        note = tls_note(tls)
    if lane is not None:
        connections = lane.connections
        app.listening(port, lambda: len(connections), tls=note)
    else:
        app.listening(port, tls=note)


def _server(
    config: Config,
    app: ASGIApp,
    broker: Broker,
    log_config: dict[str, Any] | None = None,
    started: threading.Event | None = None,
    tls: TLSFiles | None = None,
) -> uvicorn.Server:
    """A uvicorn server for ``app`` that answers waiting long polls as soon as shutdown begins (``PromptServer``),
    announces itself once listening, and then sets ``started`` (if given), whether or not it could start; ``tls``:
    the certificate it serves HTTPS with."""
    from sqsemu.http.serving import PromptServer

    uv, lane = _serving(config, app, log_config, tls)

    class _Server(PromptServer):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            try:
                await super().startup(sockets=sockets)
                if self.started:
                    _announce(app, config, self, lane, tls)
            finally:
                if started is not None:
                    started.set()

    return _Server(uv, on_shutdown=broker.stop_waiting, lane=lane)


def run(config: Config) -> int:
    """Serve ``config`` in the foreground until SIGINT (Ctrl-C) or SIGTERM, then shut down and return the process's
    exit status: 0.

    Shutdown is prompt and graceful: open long polls are answered at once with no messages, other open requests
    finish (for at most ``SHUTDOWN_GRACE_S``), the lifespan closes the broker (and, in durable mode, commits and
    closes the store). The signal that stopped the server is *not* re-raised, so a process whose main function is
    ``run`` exits with status 0. When the address cannot be listened on (the port is taken, the host is not this
    machine's) uvicorn logs why and ``run`` returns ``STARTUP_FAILED_EXIT_STATUS`` (1). In durable mode a failure
    of the store also stops the server, and ``run`` returns ``STORE_FAILED_EXIT_STATUS``
    (see :func:`_stop_on_store_failure`). The soft open-files limit is raised to the hard one first
    (``sqsemu.http.limits``). The cyclic garbage collector is paused while the server's modules are imported, and
    what exists then is frozen (:mod:`sqsemu.gcpause`); the engine's state is made after.
    """
    gcpause.pause()  # while the modules are imported; resumed before the engine's state is made (sqsemu.gcpause)
    try:
        _import_serving_modules()
    finally:
        gcpause.resume()
    import logging.config

    from sqsemu.http.limits import raise_open_files_limit
    from sqsemu.observability.logformat import logging_config

    logging.config.dictConfig(logging_config(config))  # first: what the start-up logs is in the chosen format too
    from sqsemu.declare import log_warnings

    log_warnings(config.file_warnings)  # the configuration file's: read before logging was set up
    tls = _prepare_tls(config)  # before build(): a certificate that cannot be served leaves a data folder untouched
    app, broker, _clock = build(config)
    server = _server(config, app, broker, logging_config(config), tls=tls)
    exit_status = _stop_on_store_failure(app, broker, server)
    raise_open_files_limit(config.max_connections)

    # uvicorn installs its own SIGINT/SIGTERM handlers while serving and, once it has shut down, re-raises the
    # captured signal against the handlers that were in place before. Put harmless ones there so that the
    # re-raised signal neither raises KeyboardInterrupt nor kills the process with a non-zero status.
    def _ignore(signum: int, frame: FrameType | None) -> None:
        return None

    refused = _cannot_listen(config.host, config.port)
    if refused is not None:  # before the app's start-up, which would log "Application startup complete" first
        import logging

        logging.getLogger("sqsemu.server").error("%s", refused)
        return STARTUP_FAILED_EXIT_STATUS
    previous = {sig: signal.signal(sig, _ignore) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run()
    except SystemExit as exc:
        from uvicorn.config import STARTUP_FAILURE

        if exc.code != STARTUP_FAILURE:  # uvicorn's own status for "could not bind", which it has logged
            raise
        return STARTUP_FAILED_EXIT_STATUS
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return exit_status()


def _prepare_tls(config: Config) -> TLSFiles | None:
    """The certificate files of ``--tls`` (None without it): :func:`sqsemu.security.tls.prepare`, which raises
    :class:`~sqsemu.security.tls.TLSError`. Nothing of TLS (``ssl``, cryptography) is imported without ``--tls``."""
    if not config.tls:
        return None
    from sqsemu.security.tls import prepare

    return prepare(config)


def _cannot_listen(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (a port in use, an address not this machine's), found by binding it
    for a moment before the server starts; ``None`` when it can (or when ``port`` is 0: any free port). uvicorn
    binds it again itself; this only moves the refusal before the application's start-up."""
    if port == 0:
        return None
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return None  # uvicorn reports a host it cannot resolve in its own words
    for family, kind, proto, _name, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                reason = (exc.strerror or str(exc)).lower()
                return f"cannot bind {host}:{port}: {reason}"
    return None


def _import_serving_modules() -> None:
    """Import the modules that serving needs (the app, the engine, uvicorn and its loop and HTTP protocol), so that
    they are imported while the garbage collector is paused and frozen with what start-up made before it."""
    import logging.config  # noqa: F401

    import sqsemu.declare
    import sqsemu.http.app
    import sqsemu.http.limits
    import sqsemu.http.serving  # uvicorn
    import sqsemu.observability.logformat  # noqa: F401

    if _have("uvloop"):
        import uvloop  # noqa: F401
    with contextlib.suppress(ImportError):  # uvicorn's own module for its loop="uvloop"; loaded later if renamed
        import uvicorn.loops.uvloop  # noqa: F401
    if _have("httptools"):
        import sqsemu.http.cycle
        import sqsemu.http.sqsprotocol
        import sqsemu.security.forwarded  # noqa: F401


def _stop_on_store_failure(app: ASGIApp, broker: Broker, server: uvicorn.Server) -> Callable[[], int]:
    """Make a failure of ``app``'s durable store (if it has one) stop ``server``; returns a function giving the
    exit status: 0, or ``STORE_FAILED_EXIT_STATUS`` once the store has failed.

    A failed store has already answered every request waiting for its commit with an error and refuses every later
    one (HTTP 500), and logged why in one line. The engine's state is then ahead of the file, so the process stops,
    as databases do when a write fails: a supervisor (Docker's restart policy) restarts it from what is on disk.
    Shutdown is uvicorn's graceful one (requests under way are answered, with 500s); long polls waiting for a
    message are answered at once (with 500s too) instead of holding the shutdown up for their wait time.
    """
    status = 0
    store: Store | None = getattr(app, "store", None)

    def failed(failure: str) -> None:
        nonlocal status
        status = STORE_FAILED_EXIT_STATUS
        server.should_exit = True  # uvicorn's main loop sees it within 0.1 s
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop running: nothing is being served
        loop.call_soon(broker.stop_waiting)  # not now: the store may be failing inside an engine change

    if store is not None:
        store.on_failure = failed
    return lambda: status


class ServerThread:
    """A server running in a background thread, for in-process tests.

    ``config.port`` is ignored: the server listens on a free port of ``config.host`` (chosen by the OS), so
    any number of these can run at once. Use as a context manager (or call :meth:`start` / :meth:`stop`)::

        with ServerThread(Config(clock="manual")) as srv:
            boto3.client("sqs", endpoint_url=srv.endpoint_url, ...)
            srv.advance(30)  # 30 s pass for the server; due timers fire

    In durable mode a failure of the store stops the server, as it stops ``sqsemu`` (:attr:`exit_status` becomes
    ``STORE_FAILED_EXIT_STATUS``).

    With ``Config(tls=True)`` it serves HTTPS (the local CA in ``tls_dir``, or the operator's ``tls_cert``):
    ``endpoint_url`` says ``https://``, ``tls`` holds the files (``tls.ca_file`` is what clients verify with); a
    certificate that cannot be served makes :meth:`start` raise :class:`~sqsemu.security.tls.TLSError`.

    Attributes (valid once started): ``port`` (int), ``endpoint_url`` (``"http://host:port"``), ``clock`` and
    ``broker`` (the live objects; they belong to the server's event loop thread: reach them through
    :meth:`call` or :meth:`advance`), ``app`` and ``config``. The server (and, in durable mode, its data file) is
    built by :meth:`start`: a ``ServerThread`` that is never started holds nothing open.
    """

    app: ASGIApp
    broker: Broker
    clock: Clock

    def __init__(self, config: Config | None = None) -> None:
        self.config = config if config is not None else Config()
        self.port: int = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._exit_status: Callable[[], int] = lambda: 0
        self.tls: TLSFiles | None = None

    @property
    def exit_status(self) -> int:
        """0, or ``STORE_FAILED_EXIT_STATUS`` (3) once the durable store failed: the server then stops by itself,
        as ``sqsemu`` does (its requests are answered InternalError until then); :meth:`join` waits for that."""
        return self._exit_status()

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds for the server to stop (by itself, after its durable store failed, or
        by :meth:`stop`); whether it has stopped."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def endpoint_url(self) -> str:
        """``http://<host>:<port>`` of the running server (IPv6 hosts in brackets; ``https`` with ``tls``)."""
        host = self.config.host
        if ":" in host:
            host = f"[{host}]"
        return f"{'https' if self.config.tls else 'http'}://{host}:{self.port}"

    def start(self) -> ServerThread:
        """Bind a free port, start serving in a daemon thread and wait (up to 30 s) until it accepts requests.

        Raises ``RuntimeError`` if the server fails to start.
        """
        if self._thread is not None:
            raise RuntimeError("ServerThread already started")
        from sqsemu.declare import log_warnings

        log_warnings(self.config.file_warnings)  # through the host program's logging
        self.tls = _prepare_tls(self.config)
        self.app, self.broker, self.clock = build(self.config)

        family = socket.AF_INET6 if ":" in self.config.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.config.host, 0))
        sock.set_inheritable(True)
        self.port = int(sock.getsockname()[1])

        self._server = _server(self.config, self.app, self.broker, started=self._started, tls=self.tls)
        self._exit_status = _stop_on_store_failure(self.app, self.broker, self._server)
        self._thread = threading.Thread(
            target=self._serve, args=(self._server, sock), name=f"sqsemu-{self.port}", daemon=True
        )
        self._thread.start()
        deadline_ok = self._started.wait(STARTUP_TIMEOUT_S)
        if not deadline_ok or self._error is not None or not self._server.started:
            self.stop()
            raise RuntimeError(f"sqsemu server thread failed to start: {self._error!r}")
        return self

    def _serve(self, server: uvicorn.Server, sock: socket.socket) -> None:
        loop = _new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(server.serve(sockets=[sock]))
        except BaseException as exc:  # noqa: BLE001 - reported to the starting thread
            self._error = exc
        finally:
            try:
                _cancel_leftovers(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
                sock.close()
                self._started.set()

    def call(self, fn: Callable[..., T], *args: Any, timeout: float = 30.0) -> T:
        """Run ``fn(*args)`` on the server's event loop thread and return its result (or raise its error).

        The engine and the clock belong to that thread; use this to touch them from a test while requests may be
        in flight.
        """
        loop = self._loop
        if loop is None or not loop.is_running():
            raise RuntimeError("ServerThread is not running")

        async def invoke() -> T:
            return fn(*args)

        return asyncio.run_coroutine_threadsafe(invoke(), loop).result(timeout)

    def advance(self, seconds: float) -> int:
        """Advance a ``clock="manual"`` server by ``seconds``, firing due timers on the server's loop.

        Returns the new time in epoch milliseconds. Raises ``TypeError`` when the clock is not manual.
        """
        from sqsemu.clock import ManualClock

        clock = self.clock
        if not isinstance(clock, ManualClock):
            raise TypeError("advance() needs a server with clock='manual'")
        return self.call(clock.advance, seconds)

    def stop(self, timeout: float = 30.0) -> None:
        """Shut the server down and wait up to ``timeout`` seconds for its thread (then force it).

        Waiting long polls are answered at once with no messages (whatever the clock), other open requests
        finish, the lifespan closes the broker; tasks still pending when the loop stops are cancelled and awaited
        before the loop closes."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive() and self._server is not None:
                self._server.force_exit = True
                self._thread.join(timeout)

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the tasks still pending on ``loop`` (a forced exit leaves some) and let them finish, so that closing
    the loop destroys none of them ("Task was destroyed but it is pending!", "Event loop is closed")."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    if not pending:
        return
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _new_event_loop() -> asyncio.AbstractEventLoop:
    if _have("uvloop"):
        import uvloop

        loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
        return loop
    return asyncio.new_event_loop()
