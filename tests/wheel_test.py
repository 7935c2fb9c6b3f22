"""The wheel works from a non-editable install: rules/ and templates/ ship inside the package.

One wheel, built once, installed into one fresh virtual environment for the module. That
environment is made from the base interpreter, so it is the same whether the tests run inside a
virtual environment or not. It sees no site-packages of its own but kitbuild's: a .pth file names
the folders where the interpreter running the tests finds kitbuild's dependencies, so nothing is
downloaded, and kitbuild itself can only come from the wheel, never from this checkout (the
checkout's folders, which an editable install puts on the path, are left out of that file).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from kitbuild.version import __version__

from kitbuild import build

from kittest import read_tree, write_sample_bench

REPO = Path(__file__).resolve().parent.parent

# Variables that would point a child interpreter at another environment than the one it runs in.
_FOREIGN = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "__PYVENV_LAUNCHER__")


def run(*args, cwd, check=True):
    env = {k: v for k, v in os.environ.items() if k not in _FOREIGN}
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    if check:
        assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def _inside_checkout(entry: str) -> bool:
    path = Path(entry).resolve()
    return path == REPO or REPO in path.parents


def dependency_paths() -> list[str]:
    """The import path of the interpreter running the tests, without the checkout: where it finds
    typer, jinja2 and the rest, inside a virtual environment or not."""
    return [entry for entry in sys.path if entry and os.path.isdir(entry) and not _inside_checkout(entry)]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv folder, its python) with the freshly built wheel installed."""
    root = tmp_path_factory.mktemp("wheel")
    wheels = root / "dist"
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", wheels, REPO, cwd=root)
    [wheel] = wheels.glob("kitbuild-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name  # pure Python: no compiler needed
    env = root / "venv"
    # venv builds from the base interpreter (sys._base_executable) even when run inside a venv.
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env)
    python = env / "bin" / "python"
    purelib = run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=root).stdout.strip()
    Path(purelib, "kitbuild-test-dependencies.pth").write_text("\n".join(dependency_paths()) + "\n")
    # The venv has no pip of its own; the outer pip installs into it by its interpreter path.
    run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--quiet", wheel, cwd=root)
    return env, python


def test_the_checkout_is_not_on_the_venvs_path(installed, tmp_path):
    _, python = installed
    path = run(python, "-c", "import sys; print('\\n'.join(sys.path))", cwd=tmp_path).stdout.splitlines()
    assert path and not any(_inside_checkout(entry) for entry in path if entry)


def test_import_resolves_inside_the_venv_with_its_data(installed, tmp_path):
    env, python = installed
    probe = (
        "import kitbuild, kitbuild.resources as r, kitbuild.rules as rules;"
        "print(kitbuild.__file__); print(r.rules_dir()); print(r.templates_dir());"
        "print(sorted(p.name for p in r.rules_dir().glob('*.yaml')));"
        "print(sorted(p.name for p in r.templates_dir().glob('*.j2')));"
        "print([rules.builtin_rule(i).id for i in rules.BUILTIN_RULES])"
    )
    out = run(python, "-c", probe, cwd=tmp_path).stdout.splitlines()
    site = str(env.resolve())
    module, rules_dir, templates_dir = (str(Path(p).resolve()) for p in out[:3])
    assert module.startswith(site), module
    assert rules_dir.startswith(site) and rules_dir.endswith("kitbuild/rules"), rules_dir
    assert templates_dir.startswith(site) and templates_dir.endswith("kitbuild/templates"), templates_dir
    assert out[3] == str(sorted(p.name for p in (REPO / "rules").glob("*.yaml")))
    assert out[4] == "['README.md.j2', 'index.html.j2']"
    assert out[5] == "['record-path-to-kit-path', 'box-name-to-role', 'digest-withheld']"


def test_installed_cli_builds_the_same_kit_as_the_checkout(installed, tmp_path):
    env, _ = installed
    bench = tmp_path / "bench"
    write_sample_bench(bench)
    result = run(env / "bin" / "kitbuild", "build", "--out", tmp_path / "from-wheel", cwd=bench)
    assert result.stdout.startswith(f"built tiny-kit in {tmp_path / 'from-wheel'}: 9 record files")
    build(bench / "kit.yaml", tmp_path / "from-checkout")
    assert read_tree(tmp_path / "from-wheel") == read_tree(tmp_path / "from-checkout")


def test_installed_python_m_kitbuild(installed, tmp_path):
    _, python = installed
    assert run(python, "-m", "kitbuild", "--version", cwd=tmp_path).stdout == f"kitbuild {__version__}\n"


def test_installed_demo_runs(installed, tmp_path):
    env, _ = installed
    result = run(env / "bin" / "kitbuild", "demo", tmp_path / "demo", cwd=tmp_path)
    assert f"read the kit's README: {tmp_path / 'demo'}" in result.stdout
    kits = [p.parent for p in (tmp_path / "demo").rglob("SHA256SUMS")]
    assert len(kits) == 1
    run("sha256sum", "-c", "--quiet", "SHA256SUMS", cwd=kits[0])
