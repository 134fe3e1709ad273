# report/: the terminal tables, gnuplot plots and HTML pages of every
# experiment's result directory (report/README.md).
# The report tests render pages and look at them in headless Chromium.
report-deps:
	@mk/deps report
test: report-deps
