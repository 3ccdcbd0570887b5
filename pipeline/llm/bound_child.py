"""A child process that dies with this process, even by SIGKILL, and with nothing else.

Why: a job's local LLM servers must never outlive the job (a killed rule would leave servers holding the
CPU), so each is started with PR_SET_PDEATHSIG. But Linux sends that signal when the *thread* that forked
the child exits, not the process: a server started by a call inside a batch's worker pool was SIGKILLed
as soon as that pool's thread ended (measured: exit -9), failing every later call of a gateway that runs
several batches (#48). So every such child is forked by one thread that lives as long as the process
(:func:`popen_bound`), whichever thread asks for it.
"""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the forking thread (the launcher, so the process) exits."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:  # no glibc (not Linux): the child is stopped by its owner's stop() only
        pass


class _Launcher:
    """The one thread of this process that forks bound children; it waits on its queue until the process
    ends. Made again in a forked process (threads are not copied by fork)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.jobs: queue.Queue[tuple[Callable[[], Any], Future]] = queue.Queue()
        threading.Thread(target=self._serve, name="bound-child-launcher", daemon=True).start()

    def _serve(self) -> None:
        while True:
            fn, done = self.jobs.get()
            try:
                done.set_result(fn())
            except BaseException as e:  # the asking thread raises it
                done.set_exception(e)

    def run(self, fn: Callable[[], Any]) -> Any:
        done: Future = Future()
        self.jobs.put((fn, done))
        return done.result()


_LOCK = threading.Lock()
_LAUNCHER: _Launcher | None = None


def launcher_thread() -> _Launcher:
    """This process's launcher, started on first use."""
    global _LAUNCHER
    with _LOCK:
        if _LAUNCHER is None or _LAUNCHER.pid != os.getpid():
            _LAUNCHER = _Launcher()
        return _LAUNCHER


def popen_bound(args: list[str], **kwargs: Any) -> subprocess.Popen:
    """``subprocess.Popen(args, **kwargs)`` forked by the launcher thread with PR_SET_PDEATHSIG: the child is
    SIGKILLed when this process dies, and outlives the thread that called this."""
    return launcher_thread().run(lambda: subprocess.Popen(args, preexec_fn=_die_with_parent, **kwargs))
