"""`make run` installs no system package (issue 26 item 5): neither it nor any target it reaches, through a
prerequisite or a ``$(MAKE) X`` line, is ``chromium`` or runs apt-get/dnf/brew install; `make test` still
installs the browser (its browser tests need it)."""
import re

from pipeline.datasets.paths import REPO

RULE = re.compile(r"^([\w. -]+?):(?!=)([^\n]*)\n((?:\t[^\n]*\n|#[^\n]*\n)*)", re.M)
INSTALLS = re.compile(r"\b(?:apt-get|apt|dnf|yum|brew)\s+install\b")


def targets() -> dict[str, tuple[list[str], str]]:
    """Target -> (prerequisites, recipe) of the Makefile."""
    text = (REPO / "Makefile").read_text().replace("\\\n", " ")
    out = {}
    for m in RULE.finditer(text):
        for t in m.group(1).split():
            out[t] = (m.group(2).split(), m.group(3))
    return out


def commands(recipe: str) -> str:
    """A recipe without its quoted text (a message may say how to install a browser) and comments."""
    return re.sub(r'"[^"]*"', "", re.sub(r"^#.*$", "", recipe, flags=re.M))


def reached(name: str, rules: dict) -> set[str]:
    seen, todo = set(), [name]
    while todo:
        t = todo.pop()
        if t in seen or t not in rules:
            continue
        seen.add(t)
        prereqs, recipe = rules[t]
        todo += prereqs + re.findall(r"\$\((?:SUB)?MAKE\)(?:\s+--?[\w-]+)*\s+([\w-]+)", recipe)
    return seen


def test_make_run_installs_no_system_package():
    rules = targets()
    run = reached("run", rules)
    assert {"setup", "extras", "run-setup", "time-table", "browser-check"} <= run and "chromium" not in run
    assert [t for t in run if INSTALLS.search(commands(rules[t][1]))] == []
    assert "chromium" in reached("test", rules) and INSTALLS.search(rules["chromium"][1])


def test_run_and_resume_end_with_the_summary_printed_once():
    """Their snakemake line defers onsuccess's printout (pipeline/report/summary.py LATER); their last line prints it."""
    from pipeline.report.summary import LATER

    rules = targets()
    for name in ("run", "resume"):
        recipe = [line.strip() for line in rules[name][1].splitlines() if line.startswith("\t")]
        assert any(re.match(rf"{LATER}=1 (\$\(TIMED\) dag -- )?\$\(SNAKEMAKE\)", line) for line in recipe), name
        assert recipe[-1].lstrip("@").startswith("$(BIN)/python -m pipeline summary"), name


def test_make_run_times_its_setup_and_snakemake_steps():
    """make run's set-up and Snakemake steps run under the kernel's CPU count, as the steps the time table reads
    (pipeline/make_steps.py; #34)."""
    from pipeline.report.telemetry.time_table import MAKE_RUN_TIMES

    text = (REPO / "Makefile").read_text()
    assert f"TIMED = $(PYTHON) -m pipeline.make_steps --times {MAKE_RUN_TIMES}" in text
    recipe = [line.strip() for line in targets()["run"][1].splitlines() if line.startswith("\t")]
    assert recipe[1] == "$(TIMED) setup -- $(SUBMAKE) run-setup"
    assert recipe[2] == "WATTBENCH_SUMMARY_LATER=1 $(TIMED) dag -- $(SNAKEMAKE) --cores $(CORES)"
