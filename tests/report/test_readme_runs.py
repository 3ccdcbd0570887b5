"""`make readme RUNS="default=... claims=..."` (pipeline/publish/readme_runs.py) and `make readme-check`
(readme_check.py): result blocks from two small kept runs made by hand (reports files, their manifests and
run.json), rendered by the real renderers; refused, with one line, where the runs are not one clean commit's or
a block's source is missing; and the checker on hand-made docs text."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipeline.cli import main
from pipeline.datasets.paths import REPO
from pipeline.publish.bench_doc import save_bench
from pipeline.publish.readme import BEGIN, END, PAGE_ROLES, blocks, doc_files, is_result, split_name
from pipeline.publish.readme_check import check_docs, check_pages, not_run_rows
from pipeline.publish.readme_runs import DocRun, load_runs, render_docs

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER = "fedcba9876543210fedcba9876543210fedcba98"
ENCODERS = {"wattbot/hier": "all-MiniLM-L6-v2/onnx-qint8-b1-00112233aabbccdd", "wattbot/sprout": "all-MiniLM-L6-v2/torch-fp32-sdpa"}


def block(name: str, body: str = "old 0.123\n") -> str:
    return f"{BEGIN.format(name)}\n{body}{END.format(name)}\n"


def manifest(path: Path, commit: str = COMMIT) -> None:
    path.with_name(path.name + ".manifest.json").write_text(json.dumps({"config_hash": "slice", "git_commit": commit}))


def leaderboard(reports: Path, score: float) -> None:
    (reports / "wattbot").mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"variant": ["a"], "backend": ["extractive"], "retrieval": ["x"], "score": [score], "score_lo": [0.5],
                  "score_hi": [0.8], "value": [0.585], "ref": [0.89], "na": [0.951], "doc_hit@1": [0.949],
                  "doc_recall@5": [1.0], "abstained": [0], "failures": [0], "n": [41]}
                 ).to_csv(reports / "wattbot" / "leaderboard.csv", index=False)
    manifest(reports / "wattbot" / "leaderboard.csv")


def kept(root: Path, run_id: str, config: str, commit: str = COMMIT, **record) -> Path:
    """A kept run as keep_run leaves it: runs/<id>/reports/ and run.json."""
    folder = root / "runs" / run_id
    (folder / "reports").mkdir(parents=True)
    rec = {"id": run_id, "config_hash": f"{run_id}-hash", "commit": commit, "dirty": False,
           "config_files": [str(root / "repo" / config)], "encoders": ENCODERS, "cpu": "Test CPU 9000", "scored": []}
    (folder / "run.json").write_text(json.dumps({**rec, **record}))
    return folder


@pytest.fixture
def runs(tmp_path):
    """The default run (a leaderboard) and the claims run (another leaderboard, the suite, attribution)."""
    default = kept(tmp_path, "r-default", "config.yaml")
    leaderboard(default / "reports", 0.6681)
    claims = kept(tmp_path, "r-claims", "config.claims.yaml")
    r = claims / "reports"
    leaderboard(r, 0.7123)
    (r / "retrieval").mkdir()
    pd.DataFrame([{"dataset": "hotpotqa", "variant": "bm25", "k": k, "recall": 0.7, "precision": 0.4, "ie": 0.1 * k,
                   "ndcg@10": 0.745, "mrr": 0.839, "queries": 70} for k in (1, 3, 5)]
                 ).to_csv(r / "retrieval" / "metrics.csv", index=False)
    manifest(r / "retrieval" / "metrics.csv")
    pd.DataFrame({"variant": ["a"], "correct": [21], "wrong_value": [17]}).to_csv(r / "wattbot" / "attribution_counts.csv",
                                                                                   index=False)
    manifest(r / "claims.csv")  # the figures rule's manifest stamps its tables
    return {"default": default, "claims": claims}


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "README.md").write_text("# x\n" + block("results-leaderboard") + block("bench-main"))
    (repo / "docs" / "results.md").write_text(
        "# Results\n" + block("results-suite") + block("results-leaderboard.default") + block("results-attribution")
    )
    return repo


def named(runs: dict[str, Path]) -> dict[str, str]:
    return {role: str(folder) for role, folder in runs.items()}


def test_each_page_renders_from_its_role_s_run_and_the_stamp_names_commit_config_and_encoder(runs, repo):
    done = render_docs(repo, load_runs(named(runs)))
    assert done.changed == [repo / "README.md", repo / "docs" / "results.md"]
    assert done.left == ["bench-main (README.md)"]  # a measurement block: no --bench, left and listed
    readme, results = (repo / "README.md").read_text(), (repo / "docs" / "results.md").read_text()
    assert "0.668 [0.500, 0.800]" in readme and "0.712" not in readme and "old 0.123" in readme  # bench-main as it was
    assert (
        "<sub>Rendered by `make readme` from `reports/wattbot/leaderboard.csv`: Run `r-default` · config hash "
        f"`r-default-hash` · commit `{COMMIT[:12]}` · config `config.yaml` · encoder "
        "`all-MiniLM-L6-v2/onnx-qint8-b1` (int8), `all-MiniLM-L6-v2/torch-fp32-sdpa` (fp32) on Test CPU 9000.</sub>"
    ) in readme
    assert "| hotpotqa | bm25 | 0.100 | 0.300 | 0.500 |" in results and "| a | 21 | 17 |" in results
    assert "Run `r-claims` · config hash `r-claims-hash`" in results and "config `config.claims.yaml`" in results
    # results-leaderboard.default: the default run's leaderboard on the claims page
    assert "0.668 [0.500, 0.800]" in results and "from `reports/wattbot/leaderboard.csv`: Run `r-default`" in results
    assert check_docs(repo, COMMIT) == []
    assert render_docs(repo, load_runs(named(runs))).changed == []  # idempotent


def test_measurement_blocks_render_from_a_bench_folder_with_their_own_stamp(runs, repo, tmp_path):
    bench = tmp_path / "reports"
    save_bench({"fidelity_vs_fp32": {"mean_cosine": 0.998}}, bench, "main", {"docs": 3})
    done = render_docs(repo, load_runs(named(runs)), bench)
    readme = (repo / "README.md").read_text()
    assert done.left == [] and "| fidelity_vs_fp32 · mean_cosine | 0.998 |" in readme
    assert "from `reports/bench/main.json` (commit `" in readme
    assert check_docs(repo, COMMIT) == []  # a measurement block's commit is its own
    (repo / "README.md").write_text("# x\n" + block("results-leaderboard") + block("bench-main"))
    alone = render_docs(repo, {}, bench)  # BENCH=reports alone: the measurement blocks, the result blocks untouched
    assert alone.left == ["results-leaderboard (README.md)", "results-suite (docs/results.md)",
                          "results-leaderboard.default (docs/results.md)", "results-attribution (docs/results.md)"]
    assert "old 0.123" in (repo / "README.md").read_text() and "| 0.998 |" in (repo / "README.md").read_text()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"commit": OTHER}, r"the runs were made at different commits \(default r-default at 0123456789ab, claims "
                            r"r-claims at fedcba987654\)"),
        ({"dirty": True}, "claims run r-claims .* was made at commit 0123456789ab with uncommitted changes"),
        ({"encoders": None}, "claims run r-claims .* records no encoders or CPU"),
    ],
)
def test_runs_that_are_not_one_clean_commit_s_are_refused(runs, change, message):
    path = runs["claims"] / "run.json"
    rec = {**json.loads(path.read_text()), **change}
    path.write_text(json.dumps({k: v for k, v in rec.items() if v is not None}))
    with pytest.raises(ValueError, match=message):
        load_runs(named(runs))


def test_a_missing_source_fails_naming_block_run_and_file_and_nothing_is_written(runs, repo):
    (runs["claims"] / "reports" / "retrieval" / "metrics.csv").unlink()
    before = {p: p.read_text() for p in doc_files(repo)}
    with pytest.raises(ValueError, match=r"^docs/results.md: block results-suite: the claims run r-claims has no "
                                         r"reports/retrieval/metrics.csv \("):
        render_docs(repo, load_runs(named(runs)))
    assert {p: p.read_text() for p in doc_files(repo)} == before  # README.md rendered fine, yet not written


def test_a_source_made_at_another_commit_than_its_run_fails(runs, repo):
    manifest(runs["claims"] / "reports" / "claims.csv", OTHER)
    with pytest.raises(ValueError, match="results-attribution: .* reports/claims.csv was made at commit fedcba987654, "
                                         "the run at 0123456789ab"):
        render_docs(repo, load_runs(named(runs)))


def test_roles_pages_and_suffixes(runs, repo):
    with pytest.raises(ValueError, match="block results-suite needs the claims run: --run claims=runs/<id>"):
        render_docs(repo, load_runs({"default": str(runs["default"])}))
    with pytest.raises(ValueError, match="unknown run role"):
        load_runs({"nightly": str(runs["default"])})
    (repo / "docs" / "other.md").write_text(block("results-suite"))
    with pytest.raises(ValueError, match="docs/other.md: result block results-suite names no run: add the page"):
        render_docs(repo, load_runs(named(runs)))
    assert split_name("results-leaderboard.default") == ("results-leaderboard", "default")
    assert split_name("results-leaderboard") == ("results-leaderboard", None)
    assert split_name("a.b") == ("a.b", None) and not is_result("bench-main.claims") and is_result("time")


def test_the_readme_verb_renders_then_checks_and_refuses_without_runs(runs, repo, capsys):
    args = ["readme", "--repo", str(repo), "--run", f"default={runs['default']}", "--run", f"claims={runs['claims']}"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "rendered" in out and "left as they are (no --run, no --bench, or not in the --bench folder): bench-main (README.md)" in out
    assert "readme check: every result block is stamped by a kept run of one commit" in out
    assert main(["readme", "--repo", str(repo), "--check"]) == 0
    assert main(["readme", "--repo", str(repo)]) == 2  # no runs named: one line, no rendering from reports/
    assert "readme: name the kept runs: --run default=runs/<id>" in capsys.readouterr().err
    page = repo / "docs" / "results.md"
    page.write_text(page.read_text().replace(COMMIT[:12], OTHER[:12], 1))
    with pytest.raises(SystemExit, match="1"):
        main(["readme", "--repo", str(repo), "--check"])
    assert "result blocks name 2 commits: " in capsys.readouterr().out


# ---------------------------------------------------------------- the checker on hand-made text

def run_stamp(commit: str, run: str = "r1") -> str:
    return (f"<sub>Rendered by `make readme` from `reports/claims.csv`: Run `{run}` · config hash `abc` · commit "
            f"`{commit[:12]}` · config `config.claims.yaml` · encoder `all-MiniLM-L6-v2/onnx-fp32` on X CPU.</sub>\n\n")


def test_one_commit_passes_and_mixed_commits_fail():
    one = {"README.md": block("run-time", run_stamp(COMMIT) + "9 jobs\n"),
           "docs/results.md": block("claims", run_stamp(COMMIT, "r2") + "| a | reproduced |\n")}
    assert check_pages(one) == [] and check_pages(one, COMMIT) == []
    assert check_pages(one, OTHER) == [f"result blocks name commit {COMMIT[:12]}, not the runs' {OTHER[:12]}"]
    mixed = {**one, "docs/ensembles.md": block("ensemble-size", run_stamp(OTHER) + "| 3 | 0.5 |\n")}
    [problem] = check_pages(mixed)
    assert problem == (f"result blocks name 2 commits: {COMMIT[:12]} (README.md:run-time, docs/results.md:claims); "
                       f"{OTHER[:12]} (docs/ensembles.md:ensemble-size)")


def test_a_result_block_needs_a_kept_run_s_stamp_and_measurement_blocks_keep_their_own():
    old = "<sub>Rendered by `make readme` from `reports/claims.csv` (commit `0123456789ab`, config hash `d6`).</sub>\n\n"
    bench = "<sub>Rendered by `make readme` from `reports/bench/main.json` (commit `fedcba987654`, config hash `1`).</sub>\n"
    pages = {"README.md": block("claims", old) + block("bench-main", bench) + block("time", run_stamp(COMMIT))}
    assert check_pages(pages) == ["README.md: result block claims has no kept run's stamp (commit, config, encoder): "
                                  'make readme RUNS="default=runs/<id> claims=runs/<id>"']


def test_no_row_may_read_not_run():
    body = run_stamp(COMMIT) + ("4 rows: 1 not run. not run when the ablation is not in this run's config.\n\n"
                                "| claim | verdict |\n|---|---|\n| a | reproduced |\n"
                                "| b | not run: ablation 'prompt-order' is not in this run's config |\n| c | *Not run* |\n")
    assert not_run_rows(body) == ["| b | not run: ablation 'prompt-order' is not in this run's config |",
                                  "| c | *Not run* |"]
    problems = check_pages({"docs/results.md": block("claims", body)})
    assert problems[0].startswith('docs/results.md: block claims has a row reading "not run": | b | not run:')
    assert len(problems) == 2 and not_run_rows("| a | not running out of n |\n") == []


def test_a_claim_the_config_declares_left_out_may_read_not_run_with_its_reason():
    """report.claims_left_out (config.claims.yaml's seed-100 replicate): its rows say "not run: left out by the
    config (report.claims_left_out): <why>" and pass the check; any other "not run" row still fails."""
    from pipeline.report.claims.measure import LEFT_OUT

    declared = f"| e | not run: deviates from registration; {LEFT_OUT} (report.`claims_left_out`): too slow |"
    body = run_stamp(COMMIT) + f"| claim | verdict |\n|---|---|\n{declared}\n| f | not run: ablation 'x' is not in this run's config |\n"
    assert not_run_rows(body) == ["| f | not run: ablation 'x' is not in this run's config |"]
    assert not_run_rows(f"| g | not run: {LEFT_OUT}, but with no key named |\n") != []


def test_every_page_of_the_repo_with_result_blocks_has_a_run_role():
    """The structure of the real docs (their stamps are checked by `make readme-check`)."""
    for path in doc_files(REPO):
        page = path.relative_to(REPO).as_posix()
        text = path.read_text()
        names = [n for n, _ in blocks(text, page)]
        unroled = [n for n in names if is_result(n) and split_name(n)[1] is None and page not in PAGE_ROLES]
        assert unroled == [], f"{page}: result blocks {unroled} have no run role (PAGE_ROLES)"


def test_a_run_made_in_another_clone_names_its_config_files_inside_that_clone(tmp_path):
    clone = tmp_path / "clone"
    folder = kept(clone, "r-other", "x")
    record = {**json.loads((folder / "run.json").read_text()),
              "config_files": [str(clone / "config.yaml"), str(clone / "config.mpnet.yaml"), "/elsewhere/my.yaml"]}
    header = DocRun("default", folder, record).header(tmp_path / "rendering-checkout")
    assert header.config_files == ("config.yaml", "config.mpnet.yaml", "/elsewhere/my.yaml")


def test_readme_and_docs_result_blocks_come_from_one_commit():
    """The committed README.md and docs/: every result block stamped by a kept run of one commit (or, for a
    speed block, by its own bench file), no old rendering and no "not run" row (issues #33, #35)."""
    assert check_docs(REPO) == []


def claims_rows(reports: Path) -> None:
    """A claims.csv of a suite-only run: one suite claim measured on two datasets, an LLM claim not run."""
    base = {"system": "S", "claim": "c", "published": "+0.1", "treatment": "t", "control": "u", "metric": "ie",
            "scale": "difference", "n": 40, "units": "questions"}
    rows = [{**base, "claim_id": "sprout-ie", "claim_key": "sprout-ie", "dataset": d, "verdict": "undecided",
             "estimate": 0.01, "lo": -0.02, "hi": 0.04, "p_value": 0.4} for d in ("hotpotqa", "legalbench_rag")]
    rows.append({**base, "claim_id": "kohaku-retry", "claim_key": "kohaku-retry", "dataset": "wattbot", "n": None,
                 "verdict": "not run", "note": "ablation 'retry' is not in this run's config"})
    pd.DataFrame(rows).to_csv(reports / "claims.csv", index=False)
    manifest(reports / "claims.csv", OTHER)


def test_a_suite_full_run_of_another_commit_renders_its_own_blocks_only(runs, repo, tmp_path):
    """#45 item 8: the full-size suite's blocks come from a run that may be of another commit, say so in their
    stamp, render only when that run is named, and leave out (naming them) the claims its grid did not run."""
    full = kept(tmp_path, "r-full", "config.suite-full.yaml", commit=OTHER)
    claims_rows(full / "reports")
    page = repo / "docs" / "results.md"
    page.write_text(page.read_text() + block("claims-measured.suite-full"))
    first = render_docs(repo, load_runs(named(runs)))  # default and claims: the suite-full block left as it is
    assert "claims-measured.suite-full (docs/results.md)" in first.left and "old 0.123" in page.read_text()
    with pytest.raises(ValueError, match="different commits"):  # default + claims still one commit
        load_runs({**named(runs), "claims": str(full)})
    alone = render_docs(repo, load_runs({"suite-full": str(full)}))
    text = page.read_text()
    assert alone.changed == [page] and "results-suite (docs/results.md)" in alone.left
    assert f"Run `r-full` · config hash `r-full-hash` · commit `{OTHER[:12]}` · config `config.suite-full.yaml`" in text
    assert "Not in this run's config: kohaku-retry." in text and "| wattbot" not in text
    assert "| hotpotqa (40) |" in text and "| legalbench_rag (40) |" in text and not_run_rows(text) == []
    assert check_docs(repo, COMMIT) == []  # its commit is its own; the others still one
    both = render_docs(repo, load_runs({**named(runs), "suite-full": str(full)}))
    assert both.changed == [] and check_docs(repo, COMMIT) == []
