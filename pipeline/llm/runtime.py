"""The local LLM's runtime, llama-cpp-python, made sure of by the DAG rather than the set-up.

It ships no wheel on PyPI: pip builds it from source (about 245 CPU-s, on one core in the rule).
Only runs with a local model need it, and their LLM jobs start late (after indexes and retrieval), so
the ``llm_runtime`` rule builds it while the rest of the DAG runs, on one core, and the set-up stays
quick. Where it is importable already (``make test``, ``pip install -e '.[all]'``) the rule only records
its version. The build flags live here, once: the Makefile's ``local-llm`` stamp calls this too.

The build compiles only what the Python package loads: libllama and ggml (base, CPU backend). Left out:
the multimodal library (``LLAVA_BUILD=OFF``) and llama.cpp's libllama-common with cpp-httplib, which
llama-cpp-python builds for llama.cpp's command-line tools (``llama_build.cmake``). Measured on the
2-core machine, fresh venv, empty pip cache, one compiler job (``/usr/bin/time -v``, user+sys): 516
CPU-s with common, 245 CPU-s without (#26 item 5). ggml and libllama compile from the same sources with
the same flags: the four libraries' machine code (``.text``, ``.data``, symbols) is byte-identical to the
previous build's (``.rodata`` differs only in pip's random build-directory name in assert messages), and
the default grid's 73 cached LLM requests replayed on the new build gave 73 byte-identical replies.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

PACKAGE = "llama-cpp-python[server]"
# The server needs libllama and ggml's CPU backend, not the multimodal tools; portable x86-64 flags
# (no -march=native), so a wheel pip caches on one machine runs on another of its kind.
CPU_FLAGS = "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
# Nor llama.cpp's libllama-common, which llama-cpp-python builds for nothing (see the file).
PROJECT_INCLUDE = Path(__file__).with_name("llama_build.cmake")
CMAKE_ARGS = f"{CPU_FLAGS} -DCMAKE_PROJECT_llama.cpp_INCLUDE={shlex.quote(str(PROJECT_INCLUDE))}"


def installed_version() -> str | None:
    """llama-cpp-python's version when its module imports, else None."""
    try:
        importlib.import_module("llama_cpp")
    except ImportError:
        return None
    return importlib.metadata.version("llama-cpp-python")


def install_command(constraints: Path | None) -> list[str]:
    pin = ["-c", str(constraints)] if constraints is not None else []
    return [sys.executable, "-m", "pip", "install", "--quiet", *pin, PACKAGE]


def build_env(jobs: int) -> dict[str, str]:
    """The environment of the build: the CMake flags above (a user's CMAKE_ARGS wins) and ``jobs``
    compiler processes, so a build beside other jobs takes only the cores its rule declares."""
    env = dict(os.environ)
    env.setdefault("CMAKE_ARGS", CMAKE_ARGS)
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(jobs)
    return env


def ensure_runtime(out: Path, constraints: Path | None, jobs: int, run: Callable[..., object] = subprocess.run) -> dict:
    """Install llama-cpp-python when it does not import (pip builds it), then write ``out``: the version
    and whether this call built it. A failed build raises with pip's exit code (its output is the log)."""
    from pipeline.io import atomic_write_text

    started, built = time.monotonic(), False
    if installed_version() is None:
        print(
            f"llm-runtime: building {PACKAGE} with {jobs} compiler job(s) (CMAKE_ARGS: {build_env(jobs)['CMAKE_ARGS']})"
        )
        run(install_command(constraints), env=build_env(jobs), check=True)
        importlib.invalidate_caches()
        built = True
    version = installed_version()
    if version is None:
        raise RuntimeError(f"{PACKAGE} was installed but llama_cpp does not import (see the pip output above)")
    record = {"package": "llama-cpp-python", "version": version, "built_now": built}
    atomic_write_text(out, json.dumps(record, sort_keys=True) + "\n")
    print(
        f"llm-runtime: llama-cpp-python {version} ({'built' if built else 'already installed'}, "
        f"{time.monotonic() - started:.0f} s)"
    )
    return record
