"""The one markdown table renderer behind every generated table."""
import pandas as pd

from pipeline import markdown
from pipeline.publish.results_doc import markdown_table


def test_table_lines_header_rule_rows():
    assert markdown.table_lines(["a", "b"], [[1, "x"], [2.5, None]]) == ["| a | b |", "|---|---|", "| 1 | x |", "| 2.5 | None |"]
    assert markdown.table(["a"], []) == "| a |\n|---|"


def test_results_doc_table_formats_and_escapes_then_renders_through_it():
    df = pd.DataFrame({"variant": ["a|b"], "score": [0.66849]})
    assert markdown_table(df) == markdown.table(["variant", "score"], [["a\\|b", "0.668"]]) + "\n"
