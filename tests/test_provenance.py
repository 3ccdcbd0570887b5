"""A manifest names its inputs the same way in every clone of a commit: a file inside the working directory by
its path relative to it (claims.csv's manifest named claims.yaml by the clone's absolute path, so two clones
of one commit wrote different manifests), a file outside it as it was given."""

from __future__ import annotations

import json

from pipeline.provenance import input_key, manifest_path, write_manifest


def test_an_input_inside_the_working_directory_is_named_relative(tmp_path, monkeypatch):
    work, outside = tmp_path / "clone", tmp_path / "data"
    (work / "pipeline" / "report").mkdir(parents=True)
    outside.mkdir()
    inside = work / "pipeline" / "report" / "claims.yaml"
    inside.write_text("claims: []\n")
    (outside / "gold.csv").write_text("id\n")
    (work / "given.csv").write_text("x\n")
    monkeypatch.chdir(work)
    write_manifest(work / "out.csv", {"k": 1}, [inside, outside / "gold.csv", "given.csv"])
    names = list(json.loads(manifest_path(work / "out.csv").read_text())["inputs"])
    assert sorted(names) == sorted(["pipeline/report/claims.yaml", str(outside / "gold.csv"), "given.csv"])


def test_the_key_does_not_depend_on_where_the_clone_is(tmp_path, monkeypatch):
    keys = []
    for clone in ("a", "b/deeper"):
        work = tmp_path / clone
        work.mkdir(parents=True)
        monkeypatch.chdir(work)
        keys.append(input_key(work / "pipeline" / "report" / "claims" / "claims.yaml"))
    assert keys == ["pipeline/report/claims/claims.yaml"] * 2
