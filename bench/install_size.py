"""Install size: a fresh virtual environment per install (`pip install omk`, `omk[mcp]`, `omk[test]`).

Each install is non-editable, into a new venv, from this checkout (or from `--before REF`, a git
ref exported to a scratch folder, for the before/after rows). Reported: the size of site-packages
(`du -sk`; pip and setuptools, which every venv has, included), the number of distributions omk
brings (pip and setuptools left out), and the biggest distributions by the files they installed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

from common import ROOT, add_doc_args, machine, omk_version, publish

INSTALLS = ("", "mcp", "test")
BASELINE = {"pip", "setuptools"}  # in every fresh venv
SIZES = """
import json, os
from importlib.metadata import distributions
sizes = {}
for dist in distributions():
    files = [dist.locate_file(f) for f in dist.files or []]
    sizes[dist.metadata["Name"]] = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
print(json.dumps(sizes))
"""


def export(ref: str, into: Path) -> Path:
    """The tree of `ref` (a git commit or branch) written to `into`."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def measure(source: Path, extra: str, scratch: Path) -> dict:
    venv = scratch / f"venv-{extra or 'base'}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    target = f"{source}[{extra}]" if extra else str(source)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", target], capture_output=True, text=True)
    if pip.returncode:
        sys.exit(f"pip install {target} failed:\n{pip.stderr}")
    site = next((venv / "lib").glob("python3*/site-packages"))
    kib = int(subprocess.run(["du", "-sk", str(site)], check=True, capture_output=True, text=True).stdout.split()[0])
    sizes = json.loads(subprocess.run([str(venv / "bin" / "python"), "-c", SIZES], check=True, capture_output=True, text=True).stdout)
    brought = {name: size for name, size in sizes.items() if name.lower() not in BASELINE}
    return {"mib": kib / 1024, "count": len(brought), "biggest": sorted(brought.items(), key=lambda kv: -kv[1])[:6]}


def row(label: str, m: dict) -> str:
    biggest = ", ".join(f"{name} {size / 2**20:.0f}" for name, size in m["biggest"])
    return f"| {label} | {m['mib']:.0f} MiB | {m['count']} | {biggest} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_doc_args(parser)
    parser.add_argument("--before", help="a git ref to measure too (the 'before' rows)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="omk-install-size-") as tmp:
        scratch = Path(tmp)
        empty = scratch / "venv-empty"
        subprocess.run([sys.executable, "-m", "venv", str(empty)], check=True)
        site = next((empty / "lib").glob("python3*/site-packages"))
        empty_kib = int(subprocess.run(["du", "-sk", str(site)], check=True, capture_output=True, text=True).stdout.split()[0])
        sources = [("", ROOT)]
        if args.before:
            sources.insert(0, (f"{args.before} (before): ", export(args.before, scratch / "before")))
        for prefix, source in sources:
            for extra in INSTALLS if not prefix else ("", "test"):  # the 'before' has no mcp extra
                m = measure(source, extra, scratch / (prefix and "b" or "a"))
                label = f"{prefix}`pip install {f'omk[{extra}]' if extra else 'omk'}`"
                rows.append(row(label, m))
                print(rows[-1], file=sys.stderr)
    lines = [
        f"Measured {date.today().isoformat()}: each install a new venv (`python -m venv`, then a non-editable "
        "`pip install`), sizes of site-packages by `du -sk`.",
        "",
        f"- Machine: {machine()}",
        f"- {omk_version()}; an empty venv's site-packages (pip, setuptools): {empty_kib / 1024:.0f} MiB",
        "",
        "| install | site-packages | distributions (omk included; pip, setuptools not) | biggest (MiB) |",
        "|---|---|---|---|",
        *rows,
    ]
    publish(args, "install", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
