"""Numbers with their uncertainty: paired bootstrap intervals, the randomisation test, and the
per-question tables of the ablations. No drawing, no files written."""
