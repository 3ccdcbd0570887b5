# What every rule file shares, included first by the Snakefile: where files live (paths: pipeline/paths.py),
# the config's lists the rules expand, and the wildcard constraints. A rule file reads only these, CFG and
# wf (pipeline/workflow/), never a global another rule file defines.
import re
import sys

from pipeline import names, paths, shards

# The Python that runs Snakemake (the venv's, absolute): every rule's `{PY:q} -m pipeline <verb>` loads this
# checkout's code with no activated venv (`.venv/bin/snakemake ...`), in a cluster job too (#35, #37).
PY = sys.executable
CACHE = CFG["cache_dir"]   # the LLM and embedding caches
LLM_EXEC = wf.llm_exec_json(CFG)   # execution-only LLM settings: passed to LLM jobs, never a rerun trigger
SPLITS = sorted(CFG["wattbot"]["splits"])
SCORE_SPLIT = CFG["wattbot"]["score_split"]
EXTRA_LABELLED = wf.extra_labelled_splits(CFG)   # labelled splits besides the score split (wattbot.solutions)
SUITE = wf.suite_datasets(CFG)
CORPORA = wf.register_corpora(CFG)   # `corpora:` entries: registry entries the shared rules ask (pipeline/workflow/datasets.py)
ANSWERED = "|".join(map(re.escape, [paths.WATTBOT, *CORPORA]))   # the datasets the answering rules serve

wildcard_constraints:
    dataset="|".join(map(re.escape, [paths.WATTBOT, *SUITE, *CORPORA])),
    split=names.SPLIT_PATTERN,   # the config's rule for a split's name (pipeline/names.py): every split it takes matches
    index="|".join(map(re.escape, sorted(CFG["indexes"]))),  # configured names only: no accidental matches
    rv="|".join(map(re.escape, sorted(CFG["retrieval"]))),
    doc=r"[A-Za-z0-9_.-]+",
    shard=shards.ID_PATTERN,   # <first>-<last> document positions (pipeline/shards.py)
    batch=shards.ID_PATTERN,   # <first>-<last> query positions of a split (pipeline/shards.py: query_batches)
    av=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
