"""Drawing: the figures (matplotlib, PNG and SVG with fixed metadata), the self-contained HTML page
and markdown tables of numbers. Renders what it is given; reads no results/ file of its own."""
