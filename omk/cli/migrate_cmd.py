"""`omk migrate FILE`: upgrade a legacy M365 eval dataset in place (omk/loader/formats/migrate.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_OK


def run_migrate(args: argparse.Namespace) -> int:
    from omk.core.errors import InputError
    from omk.loader.formats.migrate import migrate

    path = Path(args.file)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    done = migrate(path)
    say(done.message)
    if done.backup is not None:
        say(f"backup: {done.backup}")
    return EXIT_OK
