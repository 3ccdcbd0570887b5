"""Numbers with their uncertainty: paired bootstrap intervals, the sign-flip test with the interval that is
its inversion (signflip.py), two one-sided tests (equivalence.py), pooling across datasets (pooling.py),
simulated power (sizing.py), verdicts, and the per-question tables of the ablations. No drawing, no files
written."""
