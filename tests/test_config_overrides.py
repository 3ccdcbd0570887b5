"""Command-line overrides and dropped entries (issue #35 item 3): ``--set``/``--config`` values typed as a config
file types them, dotted keys merged into their tables (pipeline/config/overrides.py), and ``name: null``
dropping a variant, with what named it said (pipeline/config/drops.py, the claims table)."""
import json
import shlex
import subprocess
from types import SimpleNamespace

import pytest

from dag_runner import command, environment
from pipeline.config import ConfigError, config_hash, drop_notices, load_config, snakemake_config
from pipeline.datasets.paths import REPO
from pipeline.report.claims.claim import Claim
from pipeline.report.claims.measure import ClaimsInputs, measure_claims
from pipeline.verbs.base import config_overrides
from pipeline.workflow import reports, report_settings

TINY = REPO / "tests" / "tiny.yaml"


def test_set_types_values_as_a_config_file_does_and_merges_dotted_keys():
    got = config_overrides(["llm.concurrency=8", "answering.llm-cf.samples=3", "report.bootstrap=500",
                            "x={a: 0.5, b: true, c: null, d: [1, two]}", "data_root=/my/copy", "flag=True",
                            "llm={model: openai/m}", "gone=null", "empty=", "quoted='8'"])
    assert got == {"llm": {"concurrency": 8, "model": "openai/m"}, "answering": {"llm-cf": {"samples": 3}},
                   "report": {"bootstrap": 500}, "x": {"a": 0.5, "b": True, "c": None, "d": [1, "two"]},
                   "data_root": "/my/copy", "flag": True, "gone": None, "empty": None, "quoted": "8"}
    assert type(got["llm"]["concurrency"]) is int and type(got["x"]["a"]) is float
    assert config_overrides(["a.b=1", "a.b=2", "a={c: 3}"]) == {"a": {"b": 2, "c": 3}}  # later wins, tables merge


@pytest.mark.parametrize("pairs, message", [
    (["llm.concurrency"], r"config override 'llm.concurrency': write KEY=VALUE"),
    (["llm..concurrency=8"], r"config key 'llm..concurrency': a dotted key has an empty part"),
    (["answering.x.params={a: [}"], r"config key 'answering.x.params': '\{a: \[\}' is not a YAML value"),
    (["llm=5", "llm.concurrency=8"], r"config key 'llm.concurrency': 'llm' is set to 5 by an earlier override"),
])
def test_a_bad_override_is_one_line_naming_the_dotted_key(pairs, message):
    with pytest.raises(ConfigError, match=message):
        config_overrides(pairs)


def test_a_typed_override_reaches_the_validated_config_and_a_wrong_type_names_the_key():
    cfg = load_config(TINY, config_overrides(["llm.concurrency=8", "answering.mock-llm-n3.samples=2",
                                              "report.bootstrap=500"]))
    assert cfg["llm"]["concurrency"] == 8 and cfg["answering"]["mock-llm-n3"]["samples"] == 2
    vote = cfg["answering"]["mock-llm-n3"]["vote"]  # its given mode, the declared defaults of the rest written in
    assert cfg["report"]["bootstrap"] == 500 and vote == {"mode": "union", "ignore_blank": True, "tiebreak": "first"}
    with pytest.raises(ConfigError, match=r"^config key 'llm.concurrency': 'eight' is not of type 'integer'$"):
        load_config(TINY, config_overrides(["llm.concurrency=eight"]))


def test_the_snakefile_types_snakemakes_raw_config_arguments_as_set_does():
    """Snakemake's own parse of ``--config 'llm={concurrency: 8}'`` leaves '8' a string; the Snakefile reads
    its raw arguments (what it also passes to cluster jobs) through the one parser."""
    args = ["llm={concurrency: 8}", "answering={mock-llm-n3: {samples: 2}}"]
    settings = SimpleNamespace(configfiles=[TINY], config={"llm": {"concurrency": "8"}}, config_args=args)
    workflow = SimpleNamespace(config_settings=settings, configfiles=[TINY], is_main_process=True)
    cfg = snakemake_config(workflow, {})
    assert cfg == load_config(TINY, config_overrides(args))
    assert cfg["llm"]["concurrency"] == 8 and cfg["answering"]["mock-llm-n3"]["samples"] == 2


@pytest.mark.data  # reads ../shared (the fast tier runs without it: #47 item 7)
def test_snakemake_runs_with_a_nested_typed_config(tmp_path):
    """A real dry run: ``--config 'llm={concurrency: 8}'`` was "'8' is not of type 'integer'"; now the
    planned LLM job carries the typed value in its params."""
    cmd = command(tmp_path, "-n", "-p", configfile=TINY)
    at = cmd.index("--config") + 2
    cmd[at:at] = ["llm={concurrency: 8}", "answering={mock-llm-n3: {samples: 2}}"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=environment(), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    argvs = [shlex.split(ln[ln.index("-m pipeline answer"):]) for ln in done.stdout.splitlines()
             if "-m pipeline answer" in ln and "mock-llm-n3" in ln]
    assert argvs
    for argv in argvs:
        assert json.loads(argv[argv.index("--params") + 1])["answering"]["samples"] == 2
        assert json.loads(argv[argv.index("--llm-exec") + 1])["concurrency"] == 8  # execution-only settings


def test_null_drops_a_variant_and_a_dependent_one_is_an_error_naming_both():
    with pytest.raises(ConfigError, match=r"^config key 'answering.ens.members': needs answering.mock-llm, which "
                                          r"the config drops \(answering.mock-llm: null\)"):
        load_config(TINY, config_overrides(["answering.mock-llm=null"]))
    with pytest.raises(ConfigError, match=r"'answering.bm25-x.retrieval': needs retrieval.bm25"):
        load_config(TINY, config_overrides(["retrieval.bm25=null"]))
    with pytest.raises(ConfigError, match=r"'retrieval.hier-dense.index': needs indexes.hier"):
        load_config(TINY, config_overrides(["indexes.hier=null"]))
    with pytest.raises(ConfigError, match=r"'default_variant': needs answering.dense-x"):
        load_config(TINY, config_overrides(["answering.dense-x=null", "answering.ens=null"]))
    full = load_config(TINY)
    cfg = load_config(TINY, config_overrides(["answering.mock-llm=null", "answering.ens=null"]))
    assert sorted(cfg["answering"]) == sorted(set(full["answering"]) - {"mock-llm", "ens"})
    assert cfg["dropped"] == {"answering": ["ens", "mock-llm"]} and "dropped" not in full
    assert config_hash(cfg) != config_hash(full)


def test_a_null_in_an_overlay_file_drops_too_and_a_suite_variant_goes_with_a_notice(tmp_path):
    overlay = tmp_path / "smaller.yaml"
    overlay.write_text(f"extends: {TINY}\nretrieval: {{bm25: null}}\nindexes: {{bm25: null}}\n"
                       "answering: {mock-llm: null, ens: null, bm25-x: null, mock-llm-n3: null}\n")
    cfg = load_config(overlay)
    assert sorted(cfg["retrieval"]) == ["hier-dense"] and sorted(cfg["indexes"]) == ["hier"]
    assert cfg["suite"]["retrieval"] == ["hier-dense"]
    assert drop_notices(cfg) == ["notice: suite.retrieval runs without bm25: dropped by the config"]


def claims_of(cfg: dict, claims: list[Claim]):
    """The claims table the figures rule would write for ``cfg`` (its params as the rule passes them)."""
    params = report_settings.figures_params(json.loads(reports.figures_params(cfg)))
    return measure_claims(params, {}, {}, params.ablations, claims, ClaimsInputs(sizing=False)).set_index("claim_id")


def test_an_ablation_of_a_dropped_variant_is_left_out_with_a_notice_and_its_claims_say_why(capsys):
    ablation = ["report.ablations={cmp: {variants: [dense-x, bm25-x, mock-llm-n3]}, pair: {variants: [dense-x, bm25-x]}}"]
    full = load_config(TINY, config_overrides(ablation))
    drop = config_overrides([*ablation, "answering.mock-llm-n3=null"])
    settings = SimpleNamespace(configfiles=[TINY], config=drop, config_args=[*ablation, "answering.mock-llm-n3=null"])
    cfg = snakemake_config(SimpleNamespace(config_settings=settings, configfiles=[TINY], is_main_process=True), {})
    assert sorted(full["report"]["ablations"]) == ["cmp", "pair"] and sorted(cfg["report"]["ablations"]) == ["pair"]
    assert capsys.readouterr().err.strip().splitlines() == [
        "notice: ablation report.ablations.cmp left out: variant mock-llm-n3 dropped by the config"]
    base = dict(system="S", claim="c", source="s", published="p", metric="score", datasets=("wattbot",),
                direction="greater")
    claims = [Claim(id="needs-it", ablation="cmp", treatment="mock-llm-n3", control="dense-x", **base),
              Claim(id="same-ablation", ablation="cmp", treatment="bm25-x", control="dense-x", **base),
              Claim(id="elsewhere", ablation="other", treatment="bm25-x", control="dense-x", **base)]
    t = claims_of(cfg, claims)
    assert t.loc["needs-it", "verdict"] == "not run" and t.loc["needs-it", "note"] == "variant mock-llm-n3 dropped by the config"
    assert t.loc["same-ablation", "note"] == "variant mock-llm-n3 dropped by the config"
    assert t.loc["elsewhere", "note"] == "ablation 'other' is not in this run's config"  # not a drop: as before
    assert "dropped" not in json.loads(reports.figures_params(full))  # nothing dropped: the params as before


def test_a_claim_the_config_leaves_out_reads_not_run_with_its_reason_and_a_wrong_one_fails_early():
    """report.claims_left_out: a claim the grid does not run, said in its rows with the config's reason (what
    `make readme-check` accepts); a claim id that is none, or one whose ablation the grid runs, is a config error
    when the DAG is built."""
    from pipeline.config import ConfigError
    from pipeline.report.claims.measure import LEFT_OUT

    base = dict(system="S", claim="c", source="s", published="p", metric="score", datasets=("wattbot",),
                direction="greater")
    claims = [Claim(id="kohaku-ensemble-seed100", ablation="seed100", treatment="bm25-x", control="dense-x", **base),
              Claim(id="elsewhere", ablation="other", treatment="bm25-x", control="dense-x", **base)]
    cfg = load_config(TINY, config_overrides(["report.claims_left_out={kohaku-ensemble-seed100: too slow here}"]))
    t = claims_of(cfg, claims)
    assert t.loc["kohaku-ensemble-seed100", "verdict"] == "not run"
    assert t.loc["kohaku-ensemble-seed100", "note"] == f"{LEFT_OUT} (report.claims_left_out): too slow here"
    assert t.loc["elsewhere", "note"] == "ablation 'other' is not in this run's config"
    with pytest.raises(ConfigError, match="'report.claims_left_out.no-such-claim': no such claim"):
        reports.figures_params(load_config(TINY, config_overrides(["report.claims_left_out={no-such-claim: x}"])))
    runs = load_config(TINY, config_overrides(["report.claims_left_out={kohaku-retry: x}",
                                                "report.ablations={retry: {variants: [dense-x, bm25-x]}}"]))
    with pytest.raises(ConfigError, match="the grid runs it .report.ablations.retry."):
        reports.figures_params(runs)
