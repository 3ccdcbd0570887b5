# The figures rule: `snakemake figures` (or `snakemake reports/index.html`) redraws every figure,
# the statistics CSVs and the self-contained reports/index.html from results/ alone.
# `snakemake --report report.html` collects the report()-flagged outputs with their captions.

FIG_STEMS = wf.figure_stems(CFG)
CAPTIONS = "../report/captions"


CATEGORY = {"ablation": "Ablations", "attribution": "Attribution", "embedding": "Index", "ensemble": "Ablations"}
CAPTION = {"Ablations": "ablations", "Attribution": "attribution", "Index": "index_map", "Leaderboard": "leaderboard"}


def fig_category(stem):
    return CATEGORY.get(stem.split("-")[0], "Leaderboard")


rule figures:
    input:
        leaderboard="reports/wattbot/leaderboard.csv",
        per_question=expand(f"{R}/scores/{{av}}.per_question.csv", av=sorted(CFG["answering"])),
        answers=expand(f"{R}/answers/{{av}}/{SCORE_SPLIT}.jsonl", av=sorted(CFG["answering"])),
        retrieval=expand(f"{R}/retrieval/{{rv}}/{SCORE_SPLIT}.jsonl", rv=sorted(CFG["retrieval"])),
        suite=[f"results/{d}/scores/{rv}.per_query.csv" for d in SUITE for rv in wf.suite_variants(CFG)],
        index=wf.embedding_index_input(CFG),
        parse_quality=wf.parse_quality_report(CFG),
        gold=wf.split_source(CFG, SCORE_SPLIT),
    output:
        html=report("reports/index.html", caption=f"{CAPTIONS}/index.rst", category="Report"),
        ablations=report("reports/wattbot/ablations.csv", caption=f"{CAPTIONS}/ablations.rst", category="Ablations"),
        differences="reports/wattbot/ablation_differences.csv",
        attribution=report("reports/wattbot/attribution.csv", caption=f"{CAPTIONS}/attribution.rst", category="Attribution"),
        attribution_counts="reports/wattbot/attribution_counts.csv",
        attribution_by_type="reports/wattbot/attribution_by_type.csv",
        cost=report("reports/wattbot/cost.csv", caption=f"{CAPTIONS}/cost.rst", category="Leaderboard"),
        ensemble_size="reports/wattbot/ensemble_size.csv",
        pngs=[report(f"reports/figures/{s}.png", caption=f"{CAPTIONS}/{CAPTION[fig_category(s)]}.rst",
                     category=fig_category(s), labels={"figure": s}) for s in FIG_STEMS],
        svgs=[f"reports/figures/{s}.svg" for s in FIG_STEMS],
    params: cfg=wf.figures_params(CFG)
    log: "logs/figures.log"
    threads: 1
    resources: mem_mb=3000, runtime=10
    shell: "python -m pipeline figures --params {params.cfg:q} --gold {input.gold:q} --results results --reports reports 2>&1 | tee {log}"
