"""The report rules' outputs, one module per part of reports/: the WattBot leaderboard, the
figures and index.html, the retrieval suite, corpora, SproutRAG, parse quality, ensemble sizes and
the claims table. They read results/ files, compute with stats/, draw with render/."""
