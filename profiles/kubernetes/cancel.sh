#!/usr/bin/env bash
# Snakemake cancels jobs on Ctrl-C: delete the Jobs (and their pods).
kubectl delete job -n "${WATTBENCH_K8S_NAMESPACE:-wattbench}" --wait=false "$@"
