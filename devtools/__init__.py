"""Developer tooling beside the runtime package: what sets a checkout up (the installer). pipeline/
never imports it and it imports nothing of pipeline/ (the `devtools-apart` contract): it runs with a
bare venv before anything is installed."""
