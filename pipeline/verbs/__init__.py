"""The verbs of ``python -m pipeline``, one module per group (pipeline/cli.py assembles them).

Each module holds its verbs' ``cmd_*`` functions and an ``add_verbs(sub)`` that registers them;
the shared helpers and the help layout are in :mod:`pipeline.verbs.base`.
"""
