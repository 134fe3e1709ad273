"""mk: the tree's build and lint helpers; in Python, make lint's checks of
the package tree (pyimports)."""
