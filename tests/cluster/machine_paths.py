"""The system paths a SLURM, munge or MariaDB set-up uses by default, and what they hold: the test cluster lives in
a folder of its own (tests/cluster/slurm_up.sh), so after the cluster tests these are as they were before
(taken after apt, which may install the packages: their files are the packages', not the test's). A machine's
real SLURM configuration, or files an earlier set-up left with another owner, are neither read nor changed."""
from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

SYSTEM_PATHS = (
    "/etc/slurm", "/etc/munge", "/etc/mysql",
    "/var/lib/slurm", "/var/lib/munge", "/var/lib/mysql",
    "/var/log/slurm", "/var/log/munge", "/var/log/mysql",
    "/var/spool/slurmd", "/var/spool/slurmctld", "/var/spool/slurm",
    "/run/munge", "/run/mysqld", "/run/slurm", "/run/slurmctld.pid", "/run/slurmd.pid", "/run/slurmdbd.pid",
)


@dataclass(frozen=True)
class Entry:
    """One file, folder or link as the test sees it: everything that a write, a chown or a chmod changes."""

    kind: str
    mode: int
    uid: int
    gid: int
    mtime_ns: int
    content: str  # a file's sha256, a link's target, "" for a folder


def entry(path: Path) -> Entry:
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        kind, content = "link", os.readlink(path)
    elif stat.S_ISDIR(st.st_mode):
        kind, content = "folder", ""
    elif stat.S_ISREG(st.st_mode):
        kind, content = "file", hashlib.sha256(path.read_bytes()).hexdigest()
    else:
        kind, content = "other", ""  # a socket or a pipe: its presence and owner are what counts
    return Entry(kind, stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_mtime_ns, content)


def snapshot(paths: tuple[str, ...] = SYSTEM_PATHS) -> dict[str, Entry | None]:
    """Every path and everything under it (None: absent, so that a path made later shows too)."""
    out: dict[str, Entry | None] = {}
    for top in map(Path, paths):
        if not top.exists() and not top.is_symlink():
            out[str(top)] = None
            continue
        out[str(top)] = entry(top)
        if top.is_dir() and not top.is_symlink():
            for root, dirs, files in os.walk(top):
                for name in sorted(dirs + files):
                    out[str(Path(root) / name)] = entry(Path(root) / name)
    return out


def differences(before: dict[str, Entry | None], after: dict[str, Entry | None]) -> list[str]:
    """What changed, one line per path: made, removed, or which fields differ."""
    lines = []
    for path in sorted(before.keys() | after.keys()):
        a, b = before.get(path), after.get(path)
        if a == b:
            continue
        if a is None or b is None:
            lines.append(f"{path}: {'made' if a is None else 'removed'}")
        else:
            changed = [f"{f} {getattr(a, f)!r} -> {getattr(b, f)!r}" for f in Entry.__dataclass_fields__
                       if getattr(a, f) != getattr(b, f)]
            lines.append(f"{path}: {', '.join(changed)}")
    return lines
