"""Credentials stay out of cluster job scripts: a generic cluster executor writes every declared variable into
each job script (``export KEY='…' &&``, on the shared volume, left behind when a run is killed).

Why: the Snakefile declares the key variables (``envvars:``) so a run stops when one is unset and cluster jobs
receive them. Executors that pass them in the job's command (``pass_envvar_declarations_to_cmd``: the generic
cluster executor that profiles/kubernetes runs on) would write the values into ``snakejob.*.sh``. For those, the
variables are taken off the declaration once they were checked (``onstart``, before any job is submitted) and
their names, never their values, are handed to the profile's submit script in :data:`NAMES_ENV`, which gives them
to each pod as a Kubernetes Secret (``secretKeyRef``). SLURM's executor passes the environment, not a script.
"""

from __future__ import annotations

import os

NAMES_ENV = "WATTBENCH_SECRET_ENVVARS"  # comma-separated names the submit script turns into secretKeyRefs


def keep_keys_out_of_job_scripts(workflow) -> list[str]:
    """From ``onstart``: when the executor writes declared variables into job scripts, drop them from the
    declaration and name them in :data:`NAMES_ENV`; the names dropped (none for other executors)."""
    try:
        writes = bool(workflow.executor_plugin.common_settings.pass_envvar_declarations_to_cmd)
    except AttributeError:  # no executor: not a run
        return []
    names = sorted(workflow.envvars)
    if not writes or not names:
        return []
    workflow.envvars.clear()
    os.environ[NAMES_ENV] = ",".join(names)
    return names
