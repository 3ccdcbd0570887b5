"""The LLM floor: the one gateway every stage calls a model through (parse's figure
describer, retrieve's planner, answer's backend), its cache, limits, local server and the
reading of JSON replies. It imports no stage."""
