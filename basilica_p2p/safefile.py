"""Creating files safely in folders other people may write to, and reading only what is a file.

A replay folder can be shared (a club's `/srv/basilica`, a synced folder).
Anyone who can write there can plant a symbolic link under the name we are
about to use: a plain ``open(path, "w")`` would then truncate the link's
target, or put a secret into a world-readable file of the attacker's choice.
So every file the client creates goes through one of two recipes:

* :func:`create_new`: ``O_CREAT | O_EXCL | O_NOFOLLOW``. The name must not
  exist at all; a planted link (or any file) makes it fail, never followed.
* :func:`write_atomically`: a fresh temporary name made the same way in the
  same folder, written, fsynced, given its mode and renamed over ``path``.
  A rename replaces a link at ``path`` itself and never writes through it,
  and readers see the old file or the new one, never half of either.

A file that holds secrets is given ``mode=0o600`` with ``fchmod`` on the open
file, so the umask cannot widen it.  Any other file is created ``0o666`` less
the umask, as ``open`` would: a user's restrictive umask is respected.
Errors are ``OSError`` as from ``open``; callers turn them into one line.

Reading a file the user named goes through :func:`open_regular`: a named pipe,
``/dev/zero`` or a directory given where a file is expected must be refused at
once, not waited on forever or read until memory runs out.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path
from typing import BinaryIO

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_EXCL = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def sync_directory(folder: Path) -> None:
    """fsync a directory, making the creation or renaming of a file in it durable (POSIX only)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems do not allow it; the file's own data is synced regardless
    finally:
        os.close(fd)


def _write_fd(fd: int, data: bytes, mode: int | None) -> None:
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def _as_bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def create_new(path: Path, data: bytes | str, mode: int | None = None) -> None:
    """Create ``path``, which must not exist (not even as a dangling link), holding ``data``."""
    fd = os.open(path, _EXCL, 0o600 if mode is not None else 0o666)
    try:
        _write_fd(fd, _as_bytes(data), mode)
    except OSError:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise
    sync_directory(path.parent)


def write_atomically(path: Path, data: bytes | str, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` whole or not at all, never writing through a link."""
    folder = path.parent if str(path.parent) else Path(".")
    tmp = folder / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, _EXCL, 0o600 if mode is not None else 0o666)
    try:
        _write_fd(fd, _as_bytes(data), mode)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    sync_directory(folder)  # the rename itself must survive a power loss


def publish(part: Path, path: Path) -> None:
    """Give a finished file, written under the temporary name ``part``, its name ``path`` in the
    same folder; an existing ``path`` is never replaced (as :func:`create_new`).  Readers of
    the folder see no file, then the whole one."""
    import errno

    try:
        os.link(part, path, follow_symlinks=False)  # fails if path exists, even as a link
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
            raise
        if os.path.lexists(path):  # a file system without hard links: a rename, checked first
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
        os.rename(part, path)
    else:
        os.unlink(part)
    sync_directory(path.parent)


# What a path is when it is not a regular file, as a refusal names it.
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


class NotRegularFile(OSError):
    """The path names something other than a regular file; ``kind`` says what ("a named pipe")."""

    def __init__(self, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file")
        self.kind = kind


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading in binary, if it is a regular file; :class:`NotRegularFile` if not.

    It is opened without blocking, so that a named pipe nobody writes to is refused instead of
    waited on, and checked on the open file, not on the name (which could change meanwhile)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(next((kind for test, kind in _KINDS if test(mode)), "not a file"))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
