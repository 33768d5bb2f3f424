"""Runnable examples of cthreads (see docs/examples.md); each module has a ``main()``."""
