"""The score stage. Importing the package registers the built-in measures (it is pipeline/registry/metrics.py's
``builtins``): each of these modules declares the measures it computes, beside its code."""

from pipeline.score import evaluate, retrieval_metrics, wattbot, wattbot_retrieval

MEASURES = (wattbot, wattbot_retrieval, evaluate, retrieval_metrics)
