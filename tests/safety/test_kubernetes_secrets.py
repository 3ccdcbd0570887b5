"""Issue 46, case 8: the Kubernetes profile wrote keys into job scripts. The generic executor put every declared
variable into `snakejob.*.sh` on the shared volume (`export KEY='…'`), and the files stay behind when a run is
killed. Now the keys reach pods as a Secret (`secretKeyRef`): checked on the manifests the profile renders and
on every job script, through the kubectl stand-in (tests/cluster_standin/kubectl keeps both)."""
from __future__ import annotations

import json
import os

import pytest

from dag_runner import PLANTED_KEY, snakemake
from pipeline.datasets.paths import REPO

pytestmark = pytest.mark.slow
STANDIN = REPO / "tests" / "cluster_standin"
TARGET = "results/wattbot/ingest/train.csv"


def test_keys_reach_pods_as_a_secret_never_in_a_job_script(tmp_path):
    work, state = tmp_path / "work", tmp_path / "state"
    env = {"PATH": f"{STANDIN}:{os.environ['PATH']}", "STANDIN_STATE": str(state), "WATTBENCH_K8S_IMAGE": "wattbench:test",
           "STANDIN_POD_UNSET": "OPENAI_API_KEY"}  # a pod inherits nothing from the submitting shell
    done = snakemake(work, "--workflow-profile", str(REPO / "profiles" / "kubernetes"), TARGET,
                     configfile=REPO / "tests" / "tiny.yaml", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (work / TARGET).is_file()

    jobs = [json.loads(p.read_text()) for p in sorted(state.glob("wattbench-*.json"))]
    scripts = sorted(state.glob("*.jobscript"))
    assert jobs and len(scripts) == len(jobs)
    for job in jobs:
        env_of_pod = job["spec"]["template"]["spec"]["containers"][0]["env"]
        assert {"name": "OPENAI_API_KEY", "valueFrom": {"secretKeyRef": {"name": "wattbench-keys",
                                                                         "key": "OPENAI_API_KEY"}}} in env_of_pod
        assert PLANTED_KEY not in json.dumps(job)
    secret = json.loads((state / "secret-wattbench-keys.json").read_text())
    assert secret["kind"] == "Secret" and secret["stringData"] == {"OPENAI_API_KEY": PLANTED_KEY}
    for script in scripts:
        text = script.read_text()
        assert "snakemake" in text and PLANTED_KEY not in text and "OPENAI_API_KEY" not in text
    leaked = [str(p.relative_to(work)) for p in work.rglob("*") if p.is_file() and PLANTED_KEY.encode() in p.read_bytes()]
    assert leaked == []
