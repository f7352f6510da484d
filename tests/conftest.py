"""Fixtures that more than one test module uses; a fixture used by one module stays in it.

Test modules import their helpers by module name (`from helpers import make_spec`,
`from api_support import write_agent`): tests/ is on `sys.path` through `pythonpath` in
pyproject.toml, so `pytest` and `python -m pytest` collect the same way from the project root.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_support import SAMPLES_YAML, write_agent
from inline_doc_server import DocServer

# Where a test module asks for the model servers' variables to be unset.
PROVIDER_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")


def pytest_configure(config: pytest.Config) -> None:
    """Before any test starts a program: omk's modules compiled, and `python` on PATH the
    interpreter itself. Done once, in the process that starts the test processes (pytest-xdist's
    controller), which inherit PATH from it."""
    if hasattr(config, "workerinput"):
        return  # a pytest-xdist worker: the controller has done both before starting it
    import compileall

    import omk

    # Most tests start omk as a program (`python -m omk …`), hundreds of times in a run. Python
    # keeps a module compiled (its __pycache__) after its first import, but not where bytecode is
    # never written (PYTHONDONTWRITEBYTECODE, set on some machines and CI images): there every
    # start compiled omk's modules again, a large part of what a short command costs. A module
    # edited since is compiled again, as Python always does, by its time.
    compileall.compile_dir(Path(omk.__file__).parent, quiet=1)
    links = _python_links()
    if links is not None:
        config.stash[_LINKS] = (links, os.environ["PATH"])
        os.environ["PATH"] = os.pathsep.join([str(links), os.environ["PATH"]])


def pytest_unconfigure(config: pytest.Config) -> None:
    links, path = config.stash.get(_LINKS, (None, ""))
    if links is not None:
        os.environ["PATH"] = path
        shutil.rmtree(links, ignore_errors=True)


_LINKS = pytest.StashKey[tuple[Path, str]]()


def _python_links() -> Path | None:
    """A folder of links named `python` and `python3` to the interpreters those names start, for
    each that is a script choosing the interpreter (a version manager's shim), or None.

    The samples' agents run as `cmd:python agent.py`, once per sample: where `python` is such a
    script (pyenv's runs bash and `pyenv exec` first), each start costs several times the agent's
    own run. The link names the program the script itself ends in, the same interpreter with the
    same packages, so every test runs what it ran before, without the wrapper."""
    import tempfile

    links = Path(tempfile.mkdtemp(prefix="omk-tests-python-"))
    for name in ("python", "python3"):
        found = shutil.which(name)
        if found is None or not _starts_with(Path(found), b"#!"):
            continue  # not on PATH, or the interpreter itself already
        proc = subprocess.run([found, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True, timeout=60)
        real = Path(proc.stdout.strip())
        if proc.returncode == 0 and real.is_absolute() and real.is_file():
            (links / name).symlink_to(real)
    if any(links.iterdir()):
        return links
    links.rmdir()
    return None


def _starts_with(path: Path, prefix: bytes) -> bool:
    with path.open("rb") as file:
        return file.read(len(prefix)) == prefix


@pytest.fixture()
def no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's OpenAI and Anthropic addresses and keys are unset for the test, so a target
    reaches only the server the test starts and sees only the key the test sets."""
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture()
def project(tmp_path: Path) -> tuple[Path, str]:
    """A folder with eval-samples.yaml (passes, fails, errors and a judged sample) and the echo agent;
    returns the folder and the agent's `cmd:` target spec. Its pytest.ini makes it a project of its
    own, so a pytest run inside it does not climb to this repository's configuration."""
    (tmp_path / "eval-samples.yaml").write_text(SAMPLES_YAML, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return tmp_path, write_agent(tmp_path)


@pytest.fixture(scope="module")
def http() -> Iterator[DocServer]:
    """The loopback document server, one per test module (its hit counters start at zero)."""
    with DocServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless Chromium, one per test module; the test skips when none is installed."""
    from cdp_pipe import Browser, find_chromium

    executable = find_chromium()
    if executable is None:
        pytest.skip("chromium not installed (apt-get install -y chromium); .ci/run installs it")
    b = Browser(executable)
    yield b
    b.close()


@pytest.fixture(scope="session")
def progress_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The bundled experiment: the support-tone skill against no skill, `--require progress`."""
    from experiment_reports import bundled_run

    return bundled_run(tmp_path_factory.mktemp("progress") / "run", "--require", "progress")


@pytest.fixture(scope="session")
def regress_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The arms swapped: the skill is the control, no skill the treatment; `--require no-regress`."""
    from experiment_reports import SKILL, bundled_run

    folder = tmp_path_factory.mktemp("regress") / "run"
    return bundled_run(folder, "--control", f"tone={SKILL}", "--treatment", "baseline", "--require", "no-regress")


@pytest.fixture(scope="session")
def crash_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """A treatment that errors on one sample: an <error> in JUnit, an errored row in the reports."""
    from experiment_reports import crashing_run

    return crashing_run(tmp_path_factory.mktemp("crash"))


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    """A copy of the repository's `samples/skills/`, as docs/skills.md's walkthrough uses it."""
    shutil.copytree(Path(__file__).resolve().parent.parent / "samples" / "skills", tmp_path / "samples" / "skills")
    return tmp_path


@pytest.fixture
def model_url(repo_copy: Path) -> Iterator[str]:
    """For docs/skills.md's walkthrough: `omk serve-model samples/skills/model-script.yaml` (on a free port), as the page starts it."""
    # not run_omk: a server that runs until the test ends, so Popen
    command = [sys.executable, "-m", "omk", "serve-model", "samples/skills/model-script.yaml", "--port", "0"]
    server = subprocess.Popen(command, cwd=repo_copy, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = server.stdout.readline() if server.stdout else ""
        found = re.search(r"on (http://127\.0\.0\.1:\d+) ", first)
        assert found, first + (server.stderr.read() if server.stderr else "")
        yield found.group(1)
    finally:
        server.terminate()
        server.wait(timeout=10)
