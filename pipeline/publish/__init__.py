"""Publishing: the generated blocks of README.md and docs/*.md, rendered from a run's reports/ or kept runs
(`make readme`), and checked (`make readme-check`)."""
