# Power-sized samples (`power_subsets`): a group's variants answer a sample of a labelled split sized by power
# from their score-split scores (pipeline/report/stats/power.py), drawn from the split's labelled ids alone: no
# answer job reads a labels file. WattBot's only (its labelled splits: `wattbot.solutions`). Each rule calls
# the verb of its name.
if wf.power_groups(CFG):
    POWER_SPLIT = wf.power_split(CFG)

    rule labelled_ids:
        input: wf.gold_path(CFG, paths.WATTBOT, POWER_SPLIT)
        output: paths.labelled_ids(POWER_SPLIT)
        log: paths.log(f"wattbot/labelled_ids/{POWER_SPLIT}")
        benchmark: paths.rule_benchmark("labelled_ids")
        threads: 1
        resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
        shell: "{PY:q} -m pipeline labelled-ids --gold {input:q} --out {output:q} 2>&1 | tee {log}"

    rule power_sample:
        input:
            questions=wf.questions_path(paths.WATTBOT, POWER_SPLIT),
            ids=paths.labelled_ids(POWER_SPLIT),
            pilot=lambda w: list(wf.pilot_files(CFG, w.group).values()),
        output:
            questions=paths.power_questions(split=POWER_SPLIT),
            sizes=paths.power_sizes(split=POWER_SPLIT),
        wildcard_constraints: group="|".join(map(re.escape, sorted(wf.power_groups(CFG))))
        params:
            cfg=lambda w: wf.sample_params(CFG, w.group),
            pilot=lambda w: " ".join(f"--pilot {wf.shell_arg(f'{v}={p}')}" for v, p in wf.pilot_files(CFG, w.group).items()),
        log: paths.log("wattbot/power_sample/{group}")
        benchmark: paths.rule_benchmark("power_sample")
        threads: 1
        resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
        shell: "{PY:q} -m pipeline power-sample --questions {input.questions:q} --labelled-ids {input.ids:q} --params {params.cfg:q} {params.pilot} --out {output.questions:q} --sizes {output.sizes:q} 2>&1 | tee {log}"

    rule power_gold:
        input:
            gold=wf.gold_path(CFG, paths.WATTBOT, POWER_SPLIT),
            questions=paths.power_questions(split=POWER_SPLIT),
        output: paths.power_gold(split=POWER_SPLIT)
        wildcard_constraints: group="|".join(map(re.escape, sorted(wf.power_groups(CFG))))
        log: paths.log("wattbot/power_gold/{group}")
        benchmark: paths.rule_benchmark("power_gold")
        threads: 1
        resources: mem_mb=wf.per_attempt(500), runtime=wf.per_attempt(5)
        shell: "{PY:q} -m pipeline power-gold --gold {input.gold:q} --questions {input.questions:q} --out {output:q} 2>&1 | tee {log}"
