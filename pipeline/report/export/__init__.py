"""From reports/ outward: the generated blocks of README.md and docs/, the run's summary, MLflow
runs, and the headless-browser check of reports/index.html."""
