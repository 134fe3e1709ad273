"""mk: the tree's build and lint helpers; in Python, make lint's checks:
the package tree's imports (pyimports) and code that stands twice (dupes)."""
