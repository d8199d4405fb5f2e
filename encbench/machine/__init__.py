"""This machine: what it is and runs (environment.py), the checks of what a study needs of it
(checks.py), and the private Debian roots of newer servers (roots.py)."""
