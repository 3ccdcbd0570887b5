"""Run ids: which run of the workflow bought each LLM call (``python -m pipeline cost``).

Every real Snakemake run gets an id at ``onstart`` (never on ``-n``): ``logs/run.json`` holds it
with ``status: running``, the hash of the resolved config it runs (``config_hash``, the one every
report header shows) and when this invocation began (``invoked``: the summary's time counts only
its jobs); ``onsuccess`` sets ``done``. A run belongs to one resolved config. A run that did not
finish (failed, killed, stopped at its spend cap) leaves ``running`` behind, and the next run in the
same folder of the same config (``make resume``, ``--rerun-incomplete``, or a plain rerun) continues
it under the same id, so one run's spend and cap span its resumes; a run of another config starts a
new id and says so (:func:`superseded`). After a finished run the next one gets a new id. The main process
exports the id as ``WATTBENCH_RUN_ID`` before any job starts; jobs inherit it (cluster jobs that do
not get the environment read ``logs/run.json`` in the working directory). ``WATTBENCH_RUN_ID`` set
by hand names the run. A gateway outside any run (a verb run by hand, a test) is a run of its own
(``adhoc-…``).
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipeline.io import atomic_write_json
from pipeline.names import check_name

ENV = "WATTBENCH_RUN_ID"
STATE = Path("logs") / "run.json"
CHECKOUT = Path(__file__).resolve().parents[1]  # the clone this code runs from


@dataclass
class RunState:
    id: str
    status: str = "running"  # running (or unfinished) | done
    started: float = field(default_factory=time.time)
    resumed: int = 0  # how many times an unfinished run was continued
    config_files: list[str] = field(default_factory=list)
    config_hash: str = ""  # the resolved config's (pipeline/config config_hash); "" in a state of before
    invoked: float = 0.0  # when this invocation (its onstart) began; 0: unknown (a state of before)


def new_id(prefix: str = "r") -> str:
    """``r20261202-170429-3fa1``: UTC start time (sortable) plus 4 random hex digits."""
    return f"{prefix}{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(2)}"


def shown_path(path: str | Path) -> str:
    """A file as a run records it (its config files in ``logs/run.json``, so every report header and kept run;
    a replay pack's source cache): relative to the checkout when it lies in it, else to the working folder,
    else its file name alone; an absolute path (``/home/<user>/…``) would travel with a shared run."""
    given = Path(path)
    if not given.is_absolute():
        return given.as_posix()
    resolved = given.resolve()
    for base in (CHECKOUT, Path.cwd().resolve()):
        if base == resolved or base in resolved.parents:
            return resolved.relative_to(base).as_posix()
    return given.name


def read_state(path: str | Path = STATE) -> RunState | None:
    """The run state in ``path`` (None: none, or not a state); its id must be a name (it becomes
    ``runs/<id>/``: pipeline/names.py), else a one-line :class:`~pipeline.names.UnsafeName`."""
    try:
        state = RunState(**json.loads(Path(path).read_text(encoding="utf-8")))
    except (FileNotFoundError, json.JSONDecodeError, TypeError):
        return None
    check_name(state.id, f"{path}: field id")
    return state


def forced_id() -> str | None:
    """The run id set by hand (``WATTBENCH_RUN_ID``), checked as a name; None when unset."""
    value = os.environ.get(ENV)
    return check_name(value, f"environment variable {ENV}") if value else None


def continues(previous: RunState | None, config_hash: str) -> bool:
    """Whether a run of the config ``config_hash`` continues ``previous``: it did not finish and ran
    the same resolved config (a state of before, without a hash, is not continued by a hashed run)."""
    return previous is not None and previous.status != "done" and previous.config_hash == config_hash


def begin_run(path: str | Path = STATE, config_files: list[str] | None = None, config_hash: str = "") -> RunState:
    """The run this invocation is: the unfinished one in ``path`` continued when its config hash is
    ``config_hash``, else a new one (``WATTBENCH_RUN_ID`` set by hand wins: its run is continued
    whatever the config); written back as running, stamped with this invocation's start, and
    exported to the jobs."""
    previous = read_state(path)
    forced = forced_id()
    files = [shown_path(p) for p in config_files or []]
    if forced and (previous is None or previous.id != forced):
        state = RunState(forced, config_files=files, config_hash=config_hash)
    elif previous is not None and (forced or continues(previous, config_hash)):
        state = RunState(previous.id, "running", previous.started, previous.resumed + 1, files, config_hash)
    else:
        state = RunState(new_id(), config_files=files, config_hash=config_hash)
    state.invoked = time.time()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, asdict(state))
    os.environ[ENV] = state.id
    return state


def superseded(previous: RunState | None, state: RunState) -> str:
    """The line saying why ``state`` did not continue the unfinished run ``previous`` (its config
    differs), or "" when there was none to continue or it was continued."""
    if previous is None or previous.status == "done" or previous.id == state.id:
        return ""
    if previous.config_hash == state.config_hash:
        return ""  # a new id named by hand (WATTBENCH_RUN_ID) for the same config
    before = previous.config_hash or "not recorded"
    return (
        f"new run {state.id}: the config differs from unfinished run {previous.id} "
        f"(config hash {before} ≠ {state.config_hash})"
    )


def end_run(path: str | Path = STATE) -> None:
    """``onsuccess``: the run finished; the next invocation starts a new one."""
    state = read_state(path)
    if state is not None:
        atomic_write_json(path, {**asdict(state), "status": "done"})


def current_run_id(path: str | Path = STATE) -> str:
    """The id of the run this process belongs to: ``WATTBENCH_RUN_ID``, else an unfinished run of
    this folder (a cluster job without the environment), else a run of its own."""
    forced = forced_id()
    if forced:
        return forced
    state = read_state(path)
    if state is not None and state.status == "running":
        return state.id
    return new_id("adhoc-")


def resolve_run(run: str, path: str | Path = STATE) -> str:
    """A run named on the command line: an id, or ``last`` (the run in ``logs/run.json``)."""
    if run != "last":
        return check_name(run, "run id")
    state = read_state(path)
    if state is None:
        raise ValueError(f"--run last: no {path} here (run from the folder of the run, or give its id)")
    return state.id
