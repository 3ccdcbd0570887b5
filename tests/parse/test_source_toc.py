"""Heading truth from a vignette's source (.Rnw / .Rmd), for PDFs shipped without an outline."""
import pytest

from pipeline.parse.quality_pdfs import MANIFEST, load_manifest
from pipeline.parse.source_toc import latex_headings, locate, markdown_headings, source_headings

RNW = r"""\documentclass[nojss]{jss}
%% \section{Commented out}
\begin{document}
\section{Introduction} \label{sec:intro}
Text with \section inside prose is no command.
<<setup, echo=FALSE>>=
cat("\\section{Inside a code chunk}")
@
\section[Covariance matrix]{Estimating the covariance matrix $\Psi$}
\subsection[zoo objects]{Creation of \code{"zoo"} objects}
\subsubsection{The \pkg{sandwich} estimator}
\section*{Acknowledgments}
\bibliography{hac}
\section{\proglang{R} code}
\end{document}
"""


def test_latex_headings_are_what_the_page_prints():
    assert latex_headings(RNW) == [
        (1, "Introduction"),
        (1, "Estimating the covariance matrix"),  # the long (printed) title; a math symbol prints no word
        (2, 'Creation of "zoo" objects'),
        (3, "The sandwich estimator"),
        (1, "Acknowledgments"),  # starred sections print too
        (1, "References"),  # \bibliography prints its heading
        (1, "R code"),
    ]


def test_markdown_headings_skip_front_matter_and_code():
    rmd = "---\ntitle: A vignette\n---\n# Introduction\n```r\n# a comment, no heading\n```\n## Fitting `glm` models {#fit}\nText\n"
    assert markdown_headings(rmd) == [(1, "Introduction"), (2, "Fitting glm models")]
    assert source_headings("x.Rmd", rmd) == markdown_headings(rmd)
    with pytest.raises(ValueError, match="no heading reader"):
        source_headings("x.Rd", rmd)


def test_locate_finds_each_heading_in_order_through_unmapped_ligatures():
    pages = ["Title\n1 Introduction\ntext", "2 Generalized \x1ductuation tests\n2.1 Boundaries", "References\n[1] x"]
    headings = [(1, "Introduction"), (1, "Generalized fluctuation tests"), (2, "Boundaries"), (1, "References")]
    assert locate(headings, pages) == [[1, "Introduction", 1], [1, "Generalized fluctuation tests", 2],
                                       [2, "Boundaries", 2], [1, "References", 3]]
    with pytest.raises(ValueError, match="'Conclusions' is printed on no page"):
        locate([(1, "References"), (1, "Conclusions")], pages)


def test_vignette_rows_take_their_truth_from_a_checksummed_source():
    rows = [e for e in load_manifest(MANIFEST) if e.source == "r-vignettes"]
    assert len(rows) >= 8 and len({e.package for e in rows}) >= 6 and all(e.role == "dev" for e in rows)
    sourced = [e for e in rows if e.truth]
    assert len(sourced) >= 4 and all(e.truth.endswith((".Rnw", ".Rmd")) and len(e.truth_sha256) == 64 for e in sourced)
    assert all(e.package.startswith("r-cran-") for e in rows)


@pytest.mark.slow
def test_real_vignette_gets_its_outline_from_its_source(tmp_path):
    """Needs Debian's package registry: AER's vignette (no PDF outline) cut with the headings of AER.Rnw."""
    import json

    from pipeline.parse.quality_pdfs import fetch_pdfs
    from pipeline.parse.quality import measure_pdf

    (entry,) = [e for e in load_manifest(MANIFEST) if e.doc == "AER"]
    (pdf,) = fetch_pdfs(tmp_path, [entry])
    toc = json.loads(pdf.with_suffix(".toc.json").read_text())
    assert [1, "Package overview", 1] in toc and [1, "References", 5] in toc
    (q,) = measure_pdf(pdf)
    assert q.toc_entries == len(toc) and q.heading_recall >= 0.8
