"""``basilica id`` and ``basilica peers``: your key, and the keys of the peers you have played."""

from __future__ import annotations

from typing import Optional

import typer

from ._common import fail, home_of


id_app = typer.Typer(help="Your identity: the Ed25519 key that signs your games, and the name others see "
                     "(your login name unless you choose one).", no_args_is_help=True)


peers_app = typer.Typer(help="Peers you have played: which key goes with which name.", no_args_is_help=True)


@id_app.command("new")
def id_new(
    ctx: typer.Context,
    name: Optional[str] = typer.Option(None, "--name", help="The name other players see (1-64 characters; "
                                       "default: your login name). Change it later with 'basilica id rename'."),
    force: bool = typer.Option(False, "--force", metavar="", help="Replace an existing identity (its key is lost)."),
) -> None:
    """Make a new Ed25519 key pair; the private key is stored with mode 0600 under --home.

    host, join and play make one on first use, named after your login name.
    """
    from ..identity import create_identity, default_name

    home, ident = _change_identity(ctx, lambda home: create_identity(home, default_name() if name is None else name,
                                                                     force=force))
    typer.echo(f"new identity {ident.name!r} in {home}")
    _print_key(ident)


@id_app.command("show")
def id_show(ctx: typer.Context) -> None:
    """Print your name, public key and its fingerprint (SHA-256, as ssh shows host keys),
    and the same as eight words to read to a peer over the phone."""
    from ..identity import IdentityError, load_identity

    try:
        ident = load_identity(home_of(ctx))
    except IdentityError as e:
        raise fail(str(e)) from None
    typer.echo(f"name        {ident.name}")
    _print_key(ident)


@id_app.command("rename")
def id_rename(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The new name other players see (1-64 characters)."),
) -> None:
    """Change the name other players see; the key, and so who you are to them, stays.

    Peers that knew you under the old name meet the new name as a first contact.
    """
    from ..identity import rename_identity

    _, (old, ident) = _change_identity(ctx, lambda home: rename_identity(home, name))
    typer.echo(f"renamed {old!r} to {ident.name!r}; the key stays")
    _print_key(ident, public=False)


def _change_identity(ctx: typer.Context, change):
    """``(home, change(home))``; a refused change or a home that cannot be written is one error line."""
    from ..identity import IdentityError

    home = home_of(ctx)
    try:
        return home, change(home)
    except IdentityError as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(f"cannot write under {home}: {e.strerror}") from None


def _print_key(ident, public: bool = True) -> None:
    from ..fingerprint_words import fingerprint_words

    if public:
        typer.echo(f"public key  {ident.public.hex()}")
    typer.echo(f"fingerprint {ident.fingerprint}")
    typer.echo(f"words       {fingerprint_words(ident.public)}")


@peers_app.command("list")
def peers_list(ctx: typer.Context) -> None:
    """Every peer name you have played and the fingerprint of its key (SHA-256 and words)."""
    from ..fingerprint_words import fingerprint_words
    from ..identity import fingerprint
    from ..names import quoted_name
    from ..known_peers import KnownPeers, PeerKeyMismatch

    try:
        data = KnownPeers(home_of(ctx)).load()
    except PeerKeyMismatch as e:
        raise fail(str(e)) from None
    if not data:
        typer.echo("no known peers yet")
    for name, key in sorted(data.items()):
        raw = bytes.fromhex(key)
        # quoted_name(): a look-alike spelled out, and a name from the network never prints control characters
        typer.echo(f"{quoted_name(name):<24} {fingerprint(raw)}  {fingerprint_words(raw)}")


@peers_app.command("trust")
def peers_trust(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The peer's name."),
    key: str = typer.Argument(..., help="Its public key, 64 hex digits (as the refusal message shows)."),
) -> None:
    """Accept a new key for a name (after checking with the peer that it really changed).

    It replaces the entry of any known name that looks the same (alice, Alice, аlice).
    """
    from ..fingerprint_words import key_for_people
    from ..names import quoted_name
    from ..known_peers import KnownPeers, PeerKeyMismatch

    try:
        raw = bytes.fromhex(key)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise fail("a key is 64 hex digits")
    try:
        replaced = KnownPeers(home_of(ctx)).trust(name, raw)
    except PeerKeyMismatch as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(f"cannot write under {home_of(ctx)}: {e.strerror}") from None
    for old in replaced:
        typer.echo(f"{quoted_name(old)} looked the same: replaced")
    typer.echo(f"{quoted_name(name)} is now trusted with key {key_for_people(raw)}")


@peers_app.command("forget")
def peers_forget(ctx: typer.Context, name: str = typer.Argument(..., help="The peer's name.")) -> None:
    """Forget a peer, and any known name that looks the same; its key is learned again on the next contact."""
    from ..names import quoted_name
    from ..known_peers import KnownPeers, PeerKeyMismatch

    try:
        gone = KnownPeers(home_of(ctx)).forget(name)
    except PeerKeyMismatch as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(f"cannot write under {home_of(ctx)}: {e.strerror}") from None
    if not gone:
        raise fail(f"no known peer named {name!r}")
    for old in gone:
        typer.echo(f"forgot {quoted_name(old)}")
