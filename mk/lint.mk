# make lint: shellcheck on every shell script, pyflakes3 and pycodestyle on
# every Python file, ansible-lint on deploy/ansible (mk/lint says how each
# file is found). Fails on any finding.
.PHONY: lint
lint:
	@mk/lint
