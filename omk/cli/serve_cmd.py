"""`omk serve-model SCRIPT`: the scripted model of omk.testing in the foreground, until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from omk.cli.console import say
from omk.cli.main import EXIT_OK
from omk.io.textsafe import plural


def run_serve_model(args: argparse.Namespace) -> int:
    from omk.core.errors import ConfigError
    from omk.testing import ModelServer, load_script

    script = load_script(Path(args.script))
    server = ModelServer(script, port=args.port, record=Path(args.record) if args.record else None)

    def ready() -> None:
        say(f"omk serve-model: playing {args.script} on {server.root} (Ctrl-C stops)")
        say(f"  Claude Code, anthropic: targets   ANTHROPIC_BASE_URL={server.root}")
        say(f"  Codex, openai: targets            OPENAI_BASE_URL={server.openai_url}")
        sys.stdout.flush()

    try:
        asyncio.run(server.serve_forever(ready))
    except OSError as exc:
        raise ConfigError(
            f"omk serve-model: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc} "
            "(give another port with --port N, or --port 0 for a free one)"
        ) from None
    except KeyboardInterrupt:
        say(f"omk serve-model: stopped after {plural(len(server.requests), 'request', 'requests')}")
    return EXIT_OK
