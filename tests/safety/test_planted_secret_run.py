"""Issue 46, done-when: a planted-secret run. The tiny grid plus a variant at the provider stand-in, with a fake
key for an HTTP header (``x-api-key``) and a fake ``user:password`` for its ``api_base``: written in the config
they are refused (one line, the value not repeated); given the legitimate way (variables named by
``headers_env``/``userinfo_env``) they reach the stand-in, which refuses any call without them, and no copy of
either is left under results/, reports/, runs/, logs/, data/cache/ (nor anywhere in the run's folder) or in a
replay pack made from the run."""
from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest
import yaml

from dag_runner import PLANTED_KEY, environment, snakemake
from pipeline.bench.standin import StandIn, StandInConfig
from pipeline.datasets.paths import REPO

pytestmark = pytest.mark.slow
HEADER_SECRET = "hdr-PLANTED-7Hq2Vx9Lm4Rk8Tz3Bn6"
USER, PASSWORD = "wattbench", "pw-PLANTED-5Jd8Ks2Xm7Qv4Rt9"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
ENV = {"WB_PLANTED_HEADER": HEADER_SECRET, "WB_PLANTED_USERINFO": f"{USER}:{PASSWORD}"}
SECRETS = (HEADER_SECRET, PASSWORD, BASIC, PLANTED_KEY)


def config(api_base: str, per_model: dict, params: dict | None = None) -> dict:
    cfg = yaml.safe_load((REPO / "tests" / "tiny.yaml").read_text())
    cfg["answering"]["standin-llm"] = {"retrieval": "bm25", "backend": "llm", "model": "openai/standin",
                                       "splits": ["train"], **({"params": params} if params else {})}
    cfg["llm"].update(max_retries=1, backoff_s=0.1, timeout_s=30,
                      per_model={"openai/standin": {"api_base": api_base, "api_key_env": None, **per_model}})
    return cfg


def leaks(root) -> list[str]:
    return [f"{p.relative_to(root)}: {s[:12]}…" for p in sorted(root.rglob("*")) if p.is_file()
            for s in SECRETS if s.encode() in p.read_bytes()]


def test_written_in_the_config_the_secrets_stop_the_run_unrepeated(tmp_path):
    for cfg in (config("http://127.0.0.1:9/v1", {}, {"extra_headers": {"x-api-key": HEADER_SECRET}}),
                config(f"http://{USER}:{PASSWORD}@127.0.0.1:9/v1", {})):
        path = tmp_path / "planted.yaml"
        path.write_text(yaml.safe_dump(cfg))
        dry = snakemake(tmp_path / "work", "-n", configfile=path)
        said = dry.stdout + dry.stderr
        assert dry.returncode != 0 and "credentials must not be written in the config" in said
        assert not any(s in said for s in SECRETS)
    assert not (tmp_path / "work" / "results").exists()


def test_a_planted_secret_run_leaves_no_copy_of_either_secret(tmp_path):
    required = {"x-api-key": HEADER_SECRET, "Authorization": f"Basic {BASIC}"}
    with StandIn(StandInConfig(require_headers=required, mean_latency_s=0.01, max_seconds=1200)) as server:
        per_model = {"headers_env": {"x-api-key": "WB_PLANTED_HEADER"}, "userinfo_env": "WB_PLANTED_USERINFO"}
        path = tmp_path / "planted.yaml"
        path.write_text(yaml.safe_dump(config(server.api_base, per_model)))
        work = tmp_path / "work"
        done = snakemake(work, configfile=path, env=ENV)
        assert done.returncode == 0, done.stderr[-3000:]
        stats = server.snapshot()
    assert stats["ok"] > 0 and stats["unauthorised"] == 0  # every call carried both secrets, to the stand-in only
    answers = [json.loads(line) for line in (work / "results/wattbot/answers/standin-llm/train.jsonl").open()]
    assert answers and not any(a["failure"] for a in answers)

    run = json.loads((work / "logs" / "run.json").read_text())["id"]
    pack = subprocess.run([sys.executable, "-m", "pipeline", "export-replay", run, "pack", "--cache-dir", "data/cache"],
                          cwd=work, capture_output=True, text=True, env=environment({"PYTHONPATH": str(REPO), **ENV}))
    assert pack.returncode == 0, pack.stderr[-2000:]
    assert (work / "pack" / "llm.sqlite").is_file()
    for folder in ("results", "reports", "runs", "logs", "data/cache", "pack"):
        assert (work / folder).is_dir(), folder
    assert leaks(work) == []  # results/, reports/, runs/, logs/, data/cache/, the pack, .snakemake/, all of it
    assert not any(s in done.stdout + done.stderr + pack.stdout + pack.stderr for s in SECRETS)
