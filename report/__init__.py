"""Turn relay result directories into a terminal table, SVG plots and HTML."""
