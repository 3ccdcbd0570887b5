#!/usr/bin/env python3
"""Submit one Snakemake job script as a Kubernetes Job and print its name (Snakemake's job id).

Rule name, threads and resources come from the `# properties = {...}` line Snakemake writes into every
job script, so the profile passes nothing but the script (its path then resolves inside the profile).

The pod mounts the shared volume at the path Snakemake runs in, so the job script and every input and
output path mean the same inside the pod as on the submitting host.

Keys never go into the job script (pipeline/workflow/job_secrets.py takes them off Snakemake's declaration and
names them in WATTBENCH_SECRET_ENVVARS): this script applies them as one Kubernetes Secret (WATTBENCH_K8S_SECRET,
default wattbench-keys; its manifest goes to kubectl on stdin, never on a command line or disk) and the pod gets
each as an environment variable from it (secretKeyRef).
"""
import json
import os
import re
import subprocess
import sys
import uuid


def secret_names() -> list[str]:
    return [n for n in os.environ.get("WATTBENCH_SECRET_ENVVARS", "").split(",") if n]


def secret_name() -> str:
    return os.environ.get("WATTBENCH_K8S_SECRET", "wattbench-keys")


def namespace() -> str:
    return os.environ.get("WATTBENCH_K8S_NAMESPACE", "wattbench")


def secret_manifest(names: list[str]) -> dict:
    """The Secret holding the run's keys, from this process's environment (Snakemake's, which checked them)."""
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": secret_name(), "namespace": namespace(), "labels": {"app": "wattbench"}},
            "stringData": {n: os.environ[n] for n in names if n in os.environ}}


def manifest(rule: str, threads: int, mem_mb: int, runtime_min: int, jobscript: str) -> dict:
    image = os.environ.get("WATTBENCH_K8S_IMAGE")
    if not image:
        sys.exit("profiles/kubernetes: set WATTBENCH_K8S_IMAGE to an image with wattbench's dependencies")
    mount = os.environ.get("WATTBENCH_K8S_MOUNT", os.getcwd())
    name = f"wattbench-{rule.replace('_', '-')}-{uuid.uuid4().hex[:10]}"
    container = {
        "name": "job", "image": image, "workingDir": os.getcwd(), "command": ["bash", jobscript],
        "env": [{"name": k, "value": os.environ[k]} for k in ("HF_HUB_OFFLINE", "LITELLM_LOCAL_MODEL_COST_MAP")
                if k in os.environ]
        + [{"name": n, "valueFrom": {"secretKeyRef": {"name": secret_name(), "key": n}}} for n in secret_names()],
        "resources": {"requests": {"cpu": str(threads), "memory": f"{mem_mb}Mi"},
                      "limits": {"memory": f"{mem_mb}Mi"}},
        "volumeMounts": [{"name": "work", "mountPath": mount}],
    }
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": namespace(),
                     "labels": {"app": "wattbench", "rule": rule.replace("_", "-")}},
        "spec": {"backoffLimit": 0, "activeDeadlineSeconds": int(runtime_min) * 60,
                 "template": {"spec": {
                     "restartPolicy": "Never", "containers": [container],
                     "volumes": [{"name": "work", "persistentVolumeClaim": {
                         "claimName": os.environ.get("WATTBENCH_K8S_PVC", "wattbench-work")}}]}}},
    }


def job_properties(jobscript: str) -> dict:
    with open(jobscript) as f:
        for line in f:
            if m := re.match(r"# properties = (.*)", line):
                return json.loads(m.group(1))
    sys.exit(f"profiles/kubernetes: no '# properties' line in {jobscript}")


def main() -> None:
    jobscript = os.path.abspath(sys.argv[-1])
    props = job_properties(jobscript)
    res = props.get("resources", {})
    job = manifest(props.get("rule", "job"), props.get("threads", 1), res.get("mem_mb", 2000),
                   res.get("runtime", 30), jobscript)
    for obj in ([secret_manifest(secret_names())] if secret_names() else []) + [job]:
        subprocess.run(["kubectl", "apply", "-f", "-"], input=json.dumps(obj), text=True, check=True,
                       stdout=subprocess.DEVNULL)
    print(job["metadata"]["name"])


if __name__ == "__main__":
    main()
