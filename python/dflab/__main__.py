"""`python -m dflab` = the `dflab` command."""

from dflab.cli import main

# Guarded: spawn-based worker processes import the parent's main module under another name.
if __name__ == "__main__":
    raise SystemExit(main())
