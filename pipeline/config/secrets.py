"""No credential is written in a config: keys named like one and values that look like one are refused.

Why: the config travels (manifests' slices, job command lines, MLflow params, the LLM cache's request
column and so replay packs). A credential goes in an environment variable the config names: ``llm.envvars``
(checked set and passed to cluster jobs), ``llm.per_model.<model>.api_key_env`` for a model's key,
``headers_env`` for HTTP header values and ``userinfo_env`` for the ``user:password`` of its ``api_base``.
What is found is one line naming the key, never the value (pipeline/credentials.py says what is looked for).
"""

from __future__ import annotations

from pipeline.config_schema import ConfigError, ConfigTree
from pipeline.credentials import HEADER_TABLES, findings


def instead(key: str, why: str) -> str:
    """Where the credential found at ``key`` belongs: the variable that holds it, named in the config."""
    if "URL" in why and key.startswith("llm."):
        return "name it in llm.per_model.<model>.userinfo_env (the variable holding user:password)"
    if "URL" in why:  # another service's URL (tracking.mlflow): its client reads its own variables
        return "give the URL without user:password@ and the credentials in the variables its client reads"
    if any(f".{table}." in f".{key}" for table in HEADER_TABLES):
        return "name it in llm.per_model.<model>.headers_env: {<header>: <variable>}"
    return "list its name in llm.envvars (a model's key: llm.per_model.<model>.api_key_env)"


def check_credentials(cfg: ConfigTree) -> None:
    """A :class:`ConfigError` naming the first credential written in ``cfg`` (and where it belongs instead)."""
    found = findings(cfg)
    if found:
        key, why = found[0]
        raise ConfigError(
            f"config key '{key}': credentials must not be written in the config ({why}); put the value in an "
            f"environment variable and {instead(key, why)}"
        )
