# make lint: shellcheck on every shell script, pyflakes3 and pycodestyle on
# every Python file, the package tree's imports (mk/pyimports.py), no block
# of 10 lines twice (mk/dupes.py), ansible-lint on deploy/ansible (mk/lint
# says how each file is found). Fails on any finding.
.PHONY: lint
lint:
	@mk/lint
