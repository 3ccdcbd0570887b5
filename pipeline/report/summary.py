"""The end of a run speaks: what it made and where, printed last and kept as ``reports/summary.json``.

After a successful ``snakemake`` (the Snakefile's ``onsuccess:``) and at the end of ``make run`` /
``make resume`` (``python -m pipeline summary``): the top of the leaderboard with its intervals (the labelled
test split's when there is one, then the best of the score split, in-sample), the
Kaggle submission's path and row count, the claims' verdict counts (a claim once), the variants whose failures
or abstentions need a look, the report's path, and the time and CPU of this invocation (from the benchmark
files of its jobs: logs/run.json stamps when it began, pipeline/run_ids.py; or ``reports/time-run.telemetry.json``
once ``make run`` has written it for this invocation, with its set-up time), and, once the time-table step
has written it, the run's energy and CO2 estimate (pipeline/report/telemetry/energy.py).

``reports/summary.json`` carries the run's time, so like ``*.telemetry.*`` it is not among the
byte-identical results (tests/dag_runner.py ``result_files`` leaves it out by name: scripts look for
``summary.json``).

After a failed run (``onerror:``), :func:`failure_message`: each failed job, its log's path and last
lines, and the command that resumes.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pandas as pd

from pipeline.io import atomic_write_text
from pipeline.make_steps import RUSAGE
from pipeline.paths import PARSE_ERRORS, WATTBOT, Reports
from pipeline.report.sections import leading_blocks, read_primary_block

SUMMARY = "summary.json"  # reports/summary.json
TOP = 5  # leaderboard rows printed
LOG_LINES = 15  # last lines of a failed job's log
# drops the stale lock and redoes only the unfinished jobs (the Makefile); what is said when the command is not known
RESUME = "make resume (after a snakemake command of your own: the same command with --rerun-incomplete)"
# a cluster profile's helper that cancels a killed run's jobs still queued or running (docs/cluster.md)
CANCEL_STALE = "cancel-stale"


def config_files_of(args: list[str]) -> list[str]:
    """The ``--configfile`` values of a Snakemake command line as typed (``--configfile a b``, ``--configfile=a``)."""
    files, taking = [], False
    for a in args:
        if a.startswith(("--configfile=", "--configfiles=")):
            files.append(a.split("=", 1)[1])
        elif taking and not a.startswith("-"):
            files.append(a)
            continue
        taking = a in ("--configfile", "--configfiles")
    return files


def resume_command(argv: list[str], under_make: bool) -> str:
    """The exact invocation that resumes this run (the same config files, so the same run id: pipeline/run_ids.py).
    Under ``make run``/``make resume``: ``make resume CONFIG=<its config files>`` (it unlocks first). Else
    the Snakemake command as it was typed (its ``--configfile``, ``--profile``/``--workflow-profile``) plus
    ``--rerun-incomplete``; and for a run that was killed (Snakemake leaves its lock in .snakemake/locks and
    then says the directory is locked) the same command with ``--unlock`` before it, after the cluster
    profile's ``cancel-stale`` when it has one. A failed run's own lock is gone once it exits."""
    if not argv:
        return RESUME
    args = [a for a in argv[1:] if a not in ("--rerun-incomplete", "--unlock")]
    if under_make:
        files = config_files_of(args)
        return shlex.join(["make", "resume", *([f"CONFIG={' '.join(files)}"] if files else [])])
    again = shlex.join(["snakemake", *args, "--rerun-incomplete"])
    unlock = shlex.join(["snakemake", *args, "--unlock"])
    flags = ("--workflow-profile", "--profile")
    profile = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in flags), "")
    steps = [unlock, again]
    if profile and (Path(os.environ.get("PWD", ".")) / profile / CANCEL_STALE).exists():  # PWD: where it was typed
        workdir = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--directory", "-d")), None)
        steps.insert(0, shlex.join([str(Path(profile) / CANCEL_STALE), *([workdir] if workdir else [])]))
    return f"{again}\n  after a kill (Snakemake says the directory is locked): {' && '.join(steps)}"


def _csv(path: Path, primary: bool = False) -> pd.DataFrame | None:
    """The table (``primary``: a leaderboard's score split block), None for a missing or empty file."""
    if not path.exists() or path.stat().st_size <= 1:
        return None
    return read_primary_block(path, keep_default_na=False) if primary else pd.read_csv(path, keep_default_na=False)


def leaderboard_top(board: pd.DataFrame, n: int = TOP) -> list[dict]:
    """The first ``n`` rows (the leaderboard is sorted best score first): variant, score and its interval."""
    cols = [c for c in ("variant", "score", "score_lo", "score_hi", "n") if c in board.columns]
    return [
        {k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}
        for r in board[cols].head(n).to_dict("records")
    ]


def needs_a_look(board: pd.DataFrame) -> list[dict]:
    """Variants with failed questions (a call that never succeeded) or abstentions, most failures first,
    then most abstentions."""
    if "failures" not in board.columns:
        return []
    cols = [c for c in ("variant", "failures", "abstained", "n") if c in board.columns]
    rows = board[cols].copy()
    look = rows[(rows["failures"] > 0) | (rows.get("abstained", 0) > 0)]
    order = [c for c in ("failures", "abstained") if c in look.columns]
    look = look.sort_values([*order, "variant"], ascending=[False] * len(order) + [True], kind="stable")
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in look.to_dict("records")]


def claim_counts(reports_dir: Path) -> dict[str, int]:
    """Claims of reports/claims.csv per verdict, each claim once by its own verdict."""
    table = _csv(Path(Reports.at(reports_dir).claims_csv))
    if table is None:
        return {}
    from pipeline.report.claims.measure import verdict_counts

    return verdict_counts(table)


def _of_this_invocation(written: Path, root: Path) -> bool:
    """Whether a file the time-table step wrote is of the last invocation: written after it began and
    after its last job (the time-table step runs after Snakemake)."""
    from pipeline.report.telemetry.time_table import invocation_jobs, invocation_start

    after = max([invocation_start(root), *(j.end for j in invocation_jobs(root)[0])])
    return written.exists() and written.stat().st_mtime >= after


def run_time(root: Path, reports_dir: Path) -> dict:
    """This invocation's span, jobs, CPU seconds and cores busy (its benchmark files alone: the jobs it did not
    rerun are not counted): ``time-run.telemetry.json`` when the time-table step wrote it for this invocation
    (``make run``, with its set-up time), else from the benchmark files."""
    from pipeline.report.telemetry.time_table import RUN_SUMMARY, invocation_jobs, run_summary

    written = Path(reports_dir) / RUN_SUMMARY
    if _of_this_invocation(written, root):
        return json.loads(written.read_text())
    return run_summary(*invocation_jobs(root))


def run_energy(root: Path, reports_dir: Path) -> dict | None:
    """The energy estimate (``energy.telemetry.json``, written by the time-table step) when it is of this
    invocation; None otherwise (onsuccess runs before that step)."""
    from pipeline.report.telemetry.energy import SUMMARY as ENERGY

    written = Path(reports_dir) / ENERGY
    return json.loads(written.read_text()) if _of_this_invocation(written, root) else None


def corpus_reports(reports_dir: Path) -> list[dict]:
    """Each corpus's report (``corpora:``; reports/<name>/submission.csv beside its leaderboard): its
    paths, the top of its leaderboard when it is scored, its submission's rows."""
    out = Reports.at(reports_dir)
    found = []
    for sub_path in sorted(Path(reports_dir).glob("*/submission.csv")):
        name = sub_path.parent.name
        board, sub = _csv(Path(out.corpus_leaderboard(name))), _csv(sub_path)
        if name == WATTBOT or board is None:
            continue
        found.append(
            {
                "corpus": name,
                "leaderboard": {
                    "path": out.corpus_leaderboard(name),
                    "top": leaderboard_top(board) if "score" in board.columns else [],
                },
                "submission": {"path": out.corpus_submission(name), "rows": 0 if sub is None else len(sub)},
            }
        )
    return found


def idle_make_run(root: Path) -> dict:
    """``{"make_run_s": ...}`` when the last ``make run`` had nothing to do (every output up to date); else ``{}``."""
    from pipeline.report.telemetry.time_table import nothing_to_do

    stamps = nothing_to_do(root)
    return {"make_run_s": round(stamps["dag"] - stamps["start"], 1)} if stamps else {}


def build_summary(root: Path, reports_dir: Path) -> dict:
    """Everything :func:`summary_lines` prints, as data (``reports/summary.json``). After a ``make run`` that
    had nothing to do, ``nothing_to_do`` says so and the time is the last run's, as it was written."""
    out = Reports.at(reports_dir)
    idle = idle_make_run(Path(root))
    board = _csv(Path(out.leaderboard), primary=True)  # the score split's block
    blocks = leading_blocks(out.leaderboard, keep_default_na=False) if board is not None else []
    sub = _csv(Path(out.submission))
    parse_errors = _csv(Path(root) / PARSE_ERRORS)
    corpora = corpus_reports(reports_dir)
    return {
        **({"corpora": corpora} if corpora else {}),  # none: the summary of before
        # the labelled test split first when there is one (the report's headline does the same), then the score split
        "leaderboard": {"path": out.leaderboard, "top": leaderboard_top(blocks[0][1]) if blocks else []}
        | ({"split": blocks[0][0]} if blocks and blocks[0][0] else {}),
        **({"score_split": {"split": blocks[1][0], "top": leaderboard_top(blocks[1][1])}} if len(blocks) > 1 else {}),
        "submission": {"path": out.submission, "rows": len(sub)} if sub is not None else None,
        "claims": {"path": out.claims_csv, "verdicts": claim_counts(reports_dir)},
        "needs_a_look": needs_a_look(board) if board is not None else [],
        "parse_failures": len(parse_errors) if parse_errors is not None else 0,
        "report": out.index_html if Path(out.index_html).exists() else None,
        "run_readme": out / "README.md" if (Path(reports_dir) / "README.md").exists() else None,
        "time": run_time(root, reports_dir),
        "energy": run_energy(root, reports_dir),
        **({"nothing_to_do": idle} if idle else {}),
    }


def _interval(r: dict) -> str:
    return f"{r['score']:.3f} [{r['score_lo']:.3f}, {r['score_hi']:.3f}]" if "score_lo" in r else f"{r['score']:.3f}"


def _duration(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"


def summary_lines(s: dict) -> list[str]:
    """The summary as the lines printed last."""
    idle = s.get("nothing_to_do")
    lines = [
        "",
        "== wattbench: nothing to do, every output was up to date ==" if idle else "== wattbench: the run is done ==",
    ]
    lines += _leaderboard_lines(s["leaderboard"], s.get("score_split"))
    if s["submission"]:
        lines.append(f"Submission: {s['submission']['path']} ({s['submission']['rows']} rows)")
    for c in s.get("corpora", []):
        lines.append(f"Corpus {c['corpus']}: leaderboard {c['leaderboard']['path']}")
        lines += [f"  {i}. {r['variant']}  {_interval(r)}" for i, r in enumerate(c["leaderboard"]["top"], 1)]
        lines.append(f"  submission: {c['submission']['path']} ({c['submission']['rows']} rows)")
    verdicts = s["claims"]["verdicts"]
    if verdicts:
        counts = ", ".join(f"{n} {v}" for v, n in verdicts.items())
        lines.append(f"Claims ({s['claims']['path']}): {counts}")
    lines += _look_lines(s["needs_a_look"])
    if s["parse_failures"]:
        lines.append(f"Needs a look: {s['parse_failures']} document(s) could not be parsed (listed above)")
    if s["report"]:
        lines.append(f"Report: {s['report']}")
    if s.get("run_readme"):
        lines.append(f"This run's tables: {s['run_readme']}")
    return lines + _time_lines(s)


def _time_lines(s: dict) -> list[str]:
    """The time and energy lines; after a make run with nothing to do, that run's wall and the last run's figures."""
    idle, lines = s.get("nothing_to_do"), []
    if idle:
        lines.append(f"This make run: {_duration(idle['make_run_s'])}, no job started.")
    if s["time"]:
        lines.append(_time_line(s["time"], "The last run's time" if idle else "Time"))
    if s.get("energy"):
        from pipeline.report.telemetry.energy import energy_line

        lines.append(energy_line(s["energy"], "The last run's energy" if idle else "Energy"))
    return lines


def _leaderboard_lines(board: dict, score_split: dict | None) -> list[str]:
    """The top of the leaderboard (the labelled test split's when there is one), then the score split's best
    (in-sample: its defaults were chosen on it)."""
    top, lines = board["top"], []
    if top:
        on = f"{board['split']} split, " if board.get("split") else ""
        lines.append(f"Leaderboard ({board['path']}), {on}score [95% interval]:")
        width = max(len(r["variant"]) for r in top)
        lines += [f"  {i}. {r['variant']:<{width}}  {_interval(r)}" for i, r in enumerate(top, 1)]
    if score_split and score_split["top"]:
        best = score_split["top"][0]
        lines.append(f"  score split {score_split['split']} (in-sample): {best['variant']}  {_interval(best)}")
    return lines


def _look_lines(look: list[dict]) -> list[str]:
    """The first ``TOP`` variants with failures or abstentions, and how many more there are."""
    lines = [
        f"Needs a look: {r['variant']}: {r['failures']} failed, {r.get('abstained', 0)} abstained of {r.get('n', '?')}"
        for r in look[:TOP]
    ]
    if len(look) > TOP:
        lines.append(f"  ... and {len(look) - TOP} more variant(s) with failures or abstentions (summary.json)")
    return lines


def _time_line(t: dict, label: str = "Time") -> str:
    """Jobs, wall span and CPU time of the run (the kernel's count, or marked as the benchmarks' sampled sum),
    and make run's total with its set-up, when known."""
    sampled = "" if t.get("cpu_s_source") == RUSAGE else " as Snakemake sampled it (an undercount)"
    text = f"{label}: {t['jobs']} jobs in {_duration(t['span_s'])}, {_duration(t['cpu_s'])} of CPU{sampled}"
    text += f" ({t['cores_busy']} cores busy)" if t.get("cores_busy") else ""
    if "make_run_total_s" in t:
        text += f"; make run {_duration(t['make_run_total_s'])} (set-up {_duration(t['make_run_setup_s'])})"
    return text


# Set by `make run` / `make resume` on their snakemake line: onsuccess writes summary.json but leaves the
# printing to the Makefile's last step (which adds the set-up time), so the summary is printed once, last.
LATER = "WATTBENCH_SUMMARY_LATER"


def write_summary(root: str | Path = ".", reports_dir: str | Path = "reports", show: bool = True) -> dict:
    """Build the summary, write ``<reports>/summary.json`` and print it (``show``); returns it."""
    s = build_summary(Path(root), Path(reports_dir))
    if Path(reports_dir).exists():
        atomic_write_text(Path(reports_dir) / SUMMARY, json.dumps(s, indent=1, sort_keys=True) + "\n")
    if show:
        print("\n".join(summary_lines(s)))
    return s


# --- onerror: which job failed, its log, and how to go on ---

ERROR = re.compile(r"^Error in rule (?P<rule>\S+?):\s*$", re.M)
LOG = re.compile(r"^\s+log: (?P<logs>.+?)(?: \(check log file\(s\) for error details\))?\s*$", re.M)
JOBID = re.compile(r"^\s+jobid: (?P<id>\d+)", re.M)
WILDCARDS = re.compile(r"^\s+wildcards: (?P<w>.+)$", re.M)


def failed_jobs(snakemake_log: str) -> list[dict]:
    """One entry per ``Error in rule X:`` block of Snakemake's log: rule, jobid, wildcards, log paths."""
    starts = [m.start() for m in ERROR.finditer(snakemake_log)] + [len(snakemake_log)]
    jobs = []
    for a, b in zip(starts, starts[1:]):
        block = snakemake_log[a:b].split("\n\n", 1)[0]
        rule = ERROR.match(block)
        if rule is None:
            continue
        logs = LOG.search(block)
        jobid, wild = JOBID.search(block), WILDCARDS.search(block)
        jobs.append(
            {
                "rule": rule.group("rule"),
                "jobid": int(jobid.group("id")) if jobid else None,
                "wildcards": wild.group("w").strip() if wild else "",
                "logs": [p.strip() for p in logs.group("logs").split(",")] if logs else [],
            }
        )
    return jobs


def tail(path: Path, n: int = LOG_LINES) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-n:]
    except OSError:
        return []


def failure_message(snakemake_log: str | Path | list | None, root: str | Path = ".", resume: str = RESUME) -> str:
    """What ``onerror`` prints: each failed job, its log's path and last lines, and the command that resumes.
    ``snakemake_log``: Snakemake's log file (``onerror``'s ``log``: Snakemake 9 passes a list of them)."""
    if isinstance(snakemake_log, list):
        snakemake_log = next((p for p in snakemake_log if Path(p).exists()), None)
    text = Path(snakemake_log).read_text(errors="replace") if snakemake_log and Path(snakemake_log).exists() else ""
    jobs = failed_jobs(text)
    lines = ["", "== wattbench: the run stopped =="]
    if not jobs:
        lines.append(f"No failed job in Snakemake's log ({snakemake_log or 'none'}): the error is above.")
    for j in jobs:
        where = f" ({j['wildcards']})" if j["wildcards"] else ""
        lines.append(f"Failed: rule {j['rule']}{where}, job {j['jobid']}")
        for log in j["logs"]:
            last = tail(Path(root) / log)
            lines.append(f"  log: {log}" + (f", its last {len(last)} lines:" if last else " (empty or missing)"))
            lines += [f"    {line}" for line in last]
    if snakemake_log:
        lines.append(f"Snakemake's log: {snakemake_log}")
    lines.append(f"Fix the cause, then resume (finished jobs are kept): {resume}")
    return "\n".join(lines)
