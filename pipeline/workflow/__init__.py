"""What the Snakefile and its rules (pipeline/rules/*.smk, as ``wf``) need to expand the grid: document
ids, variant names, rule params, inputs, threads and shares, and the run's hooks.

Kept here (not in the Snakefile) so the DAG files stay declarative and this logic is tested. One module
per concern; this package re-exports the names the rules call.
"""

from __future__ import annotations

import pipeline.register_builtins  # noqa: F401 - the built-in index/planner kinds and fusion modes, before the Snakefile validates

# a config helper the retrieval rules call as wf.retrieval_indexes
from pipeline.config import retrieval_indexes
from pipeline.paths import limit
from pipeline.workflow.answering import (
    answer_spec,
    answer_variants,
    ensemble_args,
    ensemble_inputs,
    uses_llm,
)
from pipeline.workflow.corpora import (
    check_corpora,
    corpus_ingest_args,
    corpus_ingest_inputs,
    corpus_names,
    corpus_report_inputs,
    corpus_report_params,
    corpus_targets,
    wattbot_targets,
)
from pipeline.workflow.critical_path import prioritise as prioritise_by_critical_path
from pipeline.workflow.critical_path import record_final_dag
from pipeline.workflow.crossfit import (
    crossfit_datasets,
    crossfit_rule_inputs,
    crossfit_rule_params,
    crossfit_shell,
    crossfit_variants,
    crossfit_wildcards,
    fold_index_args,
    fold_index_extra_args,
    fold_index_inputs,
    retrieve_crossfit_inputs,
)
from pipeline.workflow.dag_jobs import needrun_jobs, when_dag_built
from pipeline.workflow.datasets import (
    dataset_tree_source,
    full_questions_path,
    gold_path,
    metadata_path,
    questions_path,
    register_corpora,
    score_split,
    solutions_path,
    split_gold,
    tree_files,
    tree_files_arg,
    use_limit,
)
from pipeline.workflow.indexes import index_extra_args, index_inputs
from pipeline.workflow.job_secrets import keep_keys_out_of_job_scripts
from pipeline.workflow.llm_shares import default_llm_api, llm_share, llm_work, needed_llm_work, planner_share
from pipeline.workflow.models import (
    LOCK_FILE,
    answer_models,
    encoder_model_inputs,
    local_model_for_file,
    packaged_encoders,
    qint8_model_folders,
    retrieval_models,
)
from pipeline.workflow.named_files import input_lists, named_args
from pipeline.workflow.params import (
    answering_params,
    index_params,
    llm_exec_json,
    retrieval_params,
    shell_arg,
)
from pipeline.workflow.parse_quality import parse_quality_pdfs, parse_quality_report, parse_targets
from pipeline.workflow.planner import retrieval_variants
from pipeline.workflow.power import answer_questions, pilot_files, power_split, sample_params, split_labels
from pipeline.workflow.power import groups as power_groups
from pipeline.workflow.query_batches import retrieval_batches, retrieve_questions
from pipeline.workflow.reports import (
    by_type_report,
    claims_file,
    figure_stems,
    figures_inputs,
    figures_params,
    registration_file,
    report_inputs,
    report_params,
)
from pipeline.workflow.run_hooks import after_error, after_run, report_parse_failures
from pipeline.workflow.scheduler import local_scheduler_without_rate_limit
from pipeline.workflow.shards import (
    dataset_shards,
    index_parts,
    index_shards,
    part_args,
    shard_tree_files,
    sprout_attention_parts,
)
from pipeline.workflow.sprout import (
    SPROUT_DIR,
    crossfit_folds,
    sprout_attention_params,
    sprout_report_index,
    sprout_report_inputs,
    sprout_report_params,
    sprout_targets,
    sprout_train_excludes,
    sprout_train_params,
)
from pipeline.workflow.suite import (
    suite_datasets,
    suite_export_params,
    suite_ks,
    suite_report_inputs,
    suite_report_params,
    suite_targets,
)
from pipeline.workflow.threads import answer_threads, encoder_threads, per_attempt, planner_threads, sprout_threads
from pipeline.workflow.wattbot import (
    check_labels,
    doc_ids,
    extra_labelled_splits,
    labelled_splits,
    labels_source,
    parse_options,
    split_source,
    tree_source,
)

__all__ = [
    "answer_questions",
    "pilot_files",
    "power_groups",
    "power_split",
    "sample_params",
    "split_labels",
    "check_labels",
    "extra_labelled_splits",
    "labels_source",
    "labelled_splits",
    "solutions_path",
    "score_split",
    "register_corpora",
    "metadata_path",
    "dataset_tree_source",
    "wattbot_targets",
    "corpus_targets",
    "corpus_report_params",
    "corpus_report_inputs",
    "corpus_names",
    "corpus_ingest_inputs",
    "corpus_ingest_args",
    "check_corpora",
    "SPROUT_DIR",
    "after_error",
    "after_run",
    "answer_models",
    "answer_spec",
    "answer_threads",
    "per_attempt",
    "answer_variants",
    "answering_params",
    "by_type_report",
    "claims_file",
    "registration_file",
    "default_llm_api",
    "doc_ids",
    "encoder_model_inputs",
    "encoder_threads",
    "ensemble_args",
    "ensemble_inputs",
    "figure_stems",
    "figures_inputs",
    "figures_params",
    "index_extra_args",
    "index_inputs",
    "index_parts",
    "dataset_shards",
    "part_args",
    "sprout_attention_parts",
    "index_shards",
    "index_params",
    "input_lists",
    "llm_exec_json",
    "llm_share",
    "llm_work",
    "needed_llm_work",
    "needrun_jobs",
    "local_model_for_file",
    "local_scheduler_without_rate_limit",
    "keep_keys_out_of_job_scripts",
    "prioritise_by_critical_path",
    "record_final_dag",
    "LOCK_FILE",
    "named_args",
    "packaged_encoders",
    "parse_options",
    "parse_quality_pdfs",
    "parse_quality_report",
    "parse_targets",
    "planner_share",
    "planner_threads",
    "qint8_model_folders",
    "questions_path",
    "full_questions_path",
    "gold_path",
    "split_gold",
    "use_limit",
    "limit",
    "report_inputs",
    "report_params",
    "report_parse_failures",
    "retrieval_batches",
    "retrieval_models",
    "retrieval_indexes",
    "retrieval_params",
    "retrieval_variants",
    "retrieve_questions",
    "shell_arg",
    "split_source",
    "crossfit_datasets",
    "crossfit_folds",
    "crossfit_rule_inputs",
    "crossfit_rule_params",
    "crossfit_shell",
    "crossfit_variants",
    "crossfit_wildcards",
    "fold_index_args",
    "fold_index_extra_args",
    "fold_index_inputs",
    "retrieve_crossfit_inputs",
    "sprout_attention_params",
    "sprout_report_index",
    "sprout_report_inputs",
    "sprout_report_params",
    "sprout_targets",
    "sprout_threads",
    "sprout_train_excludes",
    "sprout_train_params",
    "suite_datasets",
    "suite_export_params",
    "suite_ks",
    "suite_report_inputs",
    "suite_report_params",
    "suite_targets",
    "tree_files",
    "shard_tree_files",
    "tree_files_arg",
    "tree_source",
    "uses_llm",
    "when_dag_built",
]
