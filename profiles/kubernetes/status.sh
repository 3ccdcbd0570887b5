#!/usr/bin/env bash
# Snakemake asks for one job's state; answer running | success | failed from the Job's status counts.
set -uo pipefail
counts=$(kubectl get job "$1" -n "${WATTBENCH_K8S_NAMESPACE:-wattbench}" -o 'jsonpath={.status.succeeded},{.status.failed}' 2>/dev/null)
case "$counts" in
  1,*) echo success ;;
  ,|"") echo running ;;
  *) echo failed ;;
esac
