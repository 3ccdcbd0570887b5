"""The identity check a refactor passes (devtools/same_outputs.py): what counts as the same output."""

import json

from devtools.same_outputs import compare, main


def _write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_same_bytes_and_commit_only_manifests_are_identical(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for root, commit in ((a, "1" * 40), (b, "2" * 40)):
        _write(root, "results/wattbot/x.csv", "id,score\nq1,1\n")
        _write(root, "results/wattbot/x.csv.manifest.json", json.dumps({"config_hash": "h", "git_commit": commit}))
        _write(root, "reports/time.telemetry.csv", f"rule,wall\nindex,{commit[0]}\n")
    result = compare(a, b)
    assert result.identical
    assert result.same == 1
    assert result.provenance == ["results/wattbot/x.csv.manifest.json"]
    assert result.volatile == ["reports/time.telemetry.csv"]


def test_a_changed_result_a_moved_hash_and_a_missing_file_are_named(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    _write(a, "results/s.csv", "q1,1\n")
    _write(b, "results/s.csv", "q1,0\n")
    _write(a, "results/s.csv.manifest.json", json.dumps({"config_hash": "h1", "git_commit": "c"}))
    _write(b, "results/s.csv.manifest.json", json.dumps({"config_hash": "h2", "git_commit": "c"}))
    _write(a, "reports/only.md", "x")
    result = compare(a, b)
    assert not result.identical
    assert result.differ == ["results/s.csv", "results/s.csv.manifest.json"]
    assert result.only_a == ["reports/only.md"]
    assert main([str(a), str(b)]) == 1
    assert "DIFFER (2)" in capsys.readouterr().out
    assert compare(a, b, allow=("results/*", "reports/*")).differ == []
