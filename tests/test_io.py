"""pipeline.io.read_csv_columns: the retrieve verb's question reader reads a CSV as pandas did."""

import pandas as pd
import pytest

from pipeline.io import read_csv_columns


def test_reads_a_csv_as_pandas_with_str_dtype_does(tmp_path):
    text = (
        "\ufeffid,question,answer_unit\r\n"
        'q1,"How many kWh, in total?",kWh\r\n'
        "\r\n"  # a blank line: skipped
        'q2,"A ""quoted"" word and a\nline break",\r\n'
        "q3,NA,null\r\n"  # no NA conversion: text stays text
        "q4, padded ,\r\n"
        "q5,short row\r\n"  # a missing last field: empty
    )
    path = tmp_path / "q.csv"
    path.write_bytes(text.encode("utf-8"))
    ref = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert read_csv_columns(path) == {c: list(ref[c]) for c in ref.columns}


def test_a_row_longer_than_the_header_is_an_error_naming_file_and_row(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text("id,question\nq1,a\nq2,b,extra\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"q\.csv: row 3 has 3 fields, the header 2"):
        read_csv_columns(path)
