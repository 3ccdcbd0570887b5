#!/usr/bin/env bash
# Snakemake asks for one job's state; answer running | success | failed from sacct.
# `sacct -X -n -P -o State -j ID` prints e.g. "COMPLETED" or "RUNNING" (empty just after submission).
set -uo pipefail
state=$(sacct -X -n -P -o State -j "$1" 2>/dev/null | head -n 1 | cut -d' ' -f1)
case "$state" in
  COMPLETED) echo success ;;
  ""|PENDING|RUNNING|REQUEUED|RESIZING|SUSPENDED|CONFIGURING|COMPLETING) echo running ;;
  *) echo failed ;;
esac
