"""The release's scripts (release.py, smoke.py): run as files; a package so that the tests import them."""
