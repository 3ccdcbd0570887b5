"""What the config may name, in one place: the generic :class:`~pipeline.registry.base.Registry`
and its tables of named variants (answering backends, suite datasets, index kinds, planner kinds and
fusion modes). The tables sit below the stages; pipeline/register_builtins.py, a driver, imports the
stage modules that fill the tables whose built-in entries live in a stage."""
