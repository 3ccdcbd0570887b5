"""The local llama.cpp server's key, and the check that the server answering on its port is the one started.

Why: the server binds 127.0.0.1, where every local user can connect, and ``free_ports`` releases a port
before the server binds it. Another user of a shared host who sees ``--port N`` in ``ps`` could bind
first and receive every prompt (readiness accepted any HTTP 200 from ``/models``), or use the server
(issue 46). So each job's servers get a random key (:func:`new_key`) they require of every request
(llama_cpp.server's ``api_key`` setting, read from the environment by pydantic-settings: never on the
command line, which ``ps`` shows), the client sends it, and readiness asks the kernel who listens on the
port (:func:`listener_is`): a server that is not the started process is refused before any prompt goes.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

KEY_ENV = "API_KEY"  # llama_cpp.server.settings.ServerSettings.api_key, from the environment
TCP_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
LISTEN = "0A"  # the TCP state of a listening socket in /proc/net/tcp


def new_key() -> str:
    """A random key for one job's servers (never written to a file, a log or a command line)."""
    return secrets.token_urlsafe(32)


def server_env(key: str) -> dict[str, str]:
    """The server process's environment: the job's, with its key (readable by the same user only)."""
    return {**os.environ, KEY_ENV: key}


def _listening_inodes(port: int) -> set[str] | None:
    """The socket inodes listening on ``port`` (any address), from the kernel's TCP tables; None where
    there are none to read (not Linux)."""
    found, read = set(), False
    for table in TCP_TABLES:
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        read = True
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[3] == LISTEN and int(cols[1].rsplit(":", 1)[1], 16) == port:
                found.add(cols[9])
    return found if read else None


def listener_is(pid: int, port: int) -> bool | None:
    """Whether the socket listening on ``port`` belongs to process ``pid`` (True), to someone else (False),
    or None: nothing listens yet, or this system cannot tell (no /proc)."""
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    fd_dir = Path(f"/proc/{pid}/fd")
    try:
        held = {os.readlink(fd) for fd in fd_dir.iterdir()}
    except OSError:
        return None if not fd_dir.parent.exists() else False
    return any(f"socket:[{inode}]" in held for inode in inodes)
