"""The built-in answering backends, one module each: its spec (the keys its variants take), its answer
function and its ``register(...)`` call, the module's last line. Importing this module imports them (a driver
does: pipeline/register_builtins.py), so the import contracts see what is registered; a backend outside the
package is a plugin (an entry point in group ``wattbench.answer_backends``, pipeline/registry/base.py).

The modules import what is heavy (pandas: the questions' frames and the Kaggle rows) inside the functions
that use it, and read their prompts when first asked, so validating a config (the Snakefile's and every job's
driver does) loads the backends' specs and not what answers.
"""

from __future__ import annotations

from pipeline.answer import ensemble, extractive, llm_answer

LOADED = (ensemble, extractive, llm_answer)
