"""Background tasks that live as long as a block (a port mapping's renewal, the host's gathering of
candidates), even when the block is an ``AsyncExitStack`` closed by the caller."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio


@asynccontextmanager
async def background_tasks() -> AsyncIterator[trio.Nursery]:
    """A nursery whose tasks are cancelled when the block ends, whatever way it ends.

    The block's own exception comes out as raised, not wrapped in an exception group, so that
    the caller's ``except`` clauses (and contextlib's identity check) still see it.
    """
    try:
        async with trio.open_nursery() as nursery:
            try:
                yield nursery
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            inner = group.exceptions[0]
            raise inner from inner.__cause__
        raise
