"""pipeline.io: the question reader reads a CSV as pandas did; atomic writes give the umask's mode."""

import os
import stat
import subprocess
import sys

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


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_writes_get_the_umasks_mode_like_any_tool(tmp_path, umask, mode):
    # In a child process: the umask is the process's, read once by pipeline.io.
    code = (
        "import os, sys; os.umask(int(sys.argv[1], 8)); from pipeline.io import atomic_write_json, atomic_write_text; "
        "atomic_write_text(sys.argv[2] + '/a.txt', 'x'); atomic_write_json(sys.argv[2] + '/b/c.json', {}); "
        "open(sys.argv[2] + '/plain.txt', 'w').close()"
    )
    subprocess.run([sys.executable, "-c", code, oct(umask)[2:], str(tmp_path)], check=True, cwd=os.getcwd())
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.rglob("*") if p.is_file()}
    assert modes == {"a.txt": mode, "c.json": mode, "plain.txt": mode}
