"""The llm_runtime rule's verb: llama-cpp-python built when missing (with the project's CMake flags, on
the declared cores), recorded when present; a failed build fails the rule."""
import json
import shlex
import subprocess

import pytest

import pipeline.llm.runtime as rt
from pipeline import paths
from pipeline.config import load_config
from pipeline.workflow import answer_models, retrieval_models


def test_installed_runtime_is_recorded_without_a_build(tmp_path):
    if rt.installed_version() is None:
        pytest.skip("llama-cpp-python is not installed here")
    calls = []
    record = rt.ensure_runtime(tmp_path / "rt.json", None, 1, run=lambda *a, **k: calls.append(a))
    assert calls == [] and record["built_now"] is False
    assert json.loads((tmp_path / "rt.json").read_text())["version"] == record["version"]


def test_a_missing_runtime_is_built_with_the_flags_on_the_declared_cores(tmp_path, monkeypatch):
    versions = iter([None, "0.3.36"])
    monkeypatch.setattr(rt, "installed_version", lambda: next(versions))
    monkeypatch.delenv("CMAKE_ARGS", raising=False)
    seen = {}

    def fake_pip(cmd, env, check):
        seen.update(cmd=cmd, env=env, check=check)

    record = rt.ensure_runtime(tmp_path / "rt.json", tmp_path / "requirements.lock", 1, run=fake_pip)
    assert seen["cmd"][-3:] == ["-c", str(tmp_path / "requirements.lock"), rt.PACKAGE] and seen["check"]
    assert "-DLLAVA_BUILD=OFF" in seen["env"]["CMAKE_ARGS"] and "-DGGML_NATIVE=OFF" in seen["env"]["CMAKE_ARGS"]
    assert seen["env"]["CMAKE_BUILD_PARALLEL_LEVEL"] == "1"
    assert record == {"package": "llama-cpp-python", "version": "0.3.36", "built_now": True}


def test_a_users_cmake_args_win(monkeypatch):
    monkeypatch.setenv("CMAKE_ARGS", "-DGGML_BLAS=ON")
    assert rt.build_env(2)["CMAKE_ARGS"] == "-DGGML_BLAS=ON"


def test_a_failed_build_fails_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(rt, "installed_version", lambda: None)

    def failing_pip(cmd, env, check):
        raise subprocess.CalledProcessError(1, cmd)

    with pytest.raises(subprocess.CalledProcessError):
        rt.ensure_runtime(tmp_path / "rt.json", None, 1, run=failing_pip)
    assert not (tmp_path / "rt.json").exists()


def test_only_local_model_jobs_wait_for_the_runtime():
    cfg = load_config()
    assert paths.LLM_RUNTIME in answer_models(cfg, "llm-cf")
    assert answer_models(cfg, "convex-extractive") == []
    hosted = {**cfg, "llm": {**cfg["llm"], "model": "openai/gpt-4o-mini"}}
    assert answer_models(hosted, "llm-cf") == []
    assert paths.LLM_RUNTIME not in retrieval_models(cfg, "hier-convex")


def test_the_build_skips_llama_cpps_common_library(monkeypatch):
    """The CMake file reaches llama.cpp's project() through CMAKE_ARGS as scikit-build-core splits them
    (shlex), and shadows llama-cpp-python's forced LLAMA_BUILD_COMMON (its cache entry is FORCEd ON)."""
    monkeypatch.delenv("CMAKE_ARGS", raising=False)
    args = shlex.split(rt.build_env(1)["CMAKE_ARGS"])
    include = [a.split("=", 1)[1] for a in args if a.startswith("-DCMAKE_PROJECT_llama.cpp_INCLUDE=")]
    assert include == [str(rt.PROJECT_INCLUDE)] and rt.PROJECT_INCLUDE.is_file()
    lines = [line.strip() for line in rt.PROJECT_INCLUDE.read_text().splitlines() if not line.startswith("#")]
    assert "set(LLAMA_BUILD_COMMON OFF)" in lines  # a normal variable: option() then keeps it (CMP0077)
