"""Kept runs: a finished run's reports and per-question scores kept under runs/<id>/ (``store``), and
``compare`` between two of them, question by question (``compare``)."""
