"""Preloaded into the workers of the Dask LocalCluster that `dflab sweep --scheduler local`
starts (`dflab.backends`): they ignore SIGINT, as the local pool's workers do (`dflab.pool`).

A Ctrl-C in a terminal signals the whole foreground process group; a Dask worker would close
itself on it (asyncio's handler in its main thread), and a sweep that ignores SIGINT (started
with `&` from a script) would then wait for workers that are gone. The sweep alone decides what
an interrupt does: it cancels the points and closes the cluster.
"""

from __future__ import annotations

import signal
from typing import Any


def dask_setup(worker: Any) -> None:
    """Called by Dask in the worker process's main thread when the worker starts."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
