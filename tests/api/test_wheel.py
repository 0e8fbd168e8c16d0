"""What ./build.sh build leaves for users: dist/'s wheel and sdist, which a fresh CPython virtualenv
installs and runs (the ``qnnweb`` command too), and data/wheels' Pyodide wheel, compiled to Pyodide's
bytecode and tagged so that no other Python's installer takes it."""

import email.parser
import json
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile

from built_files import DATA_DIR, REPO, require
from packaging.tags import sys_tags
from packaging.utils import parse_wheel_filename

import qnnweb

VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
BUILD = "run ./build.sh build wheel pyodide-bytecode"


def dist(name):
    return require(REPO / "dist" / name, BUILD)


def pyodide_wheels():
    """The wheels the server hands Pyodide, in install order (data/wheels/manifest.json)."""
    names = json.loads(require(DATA_DIR / "wheels" / "manifest.json", BUILD).read_text())["wheels"]
    return [require(DATA_DIR / "wheels" / name, BUILD) for name in names]


def clean_env():
    """No PYTHONPATH (./pytest.sh points it at the checkout) and no virtualenv of ours: nothing of the repository."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def test_the_version_lives_in_pyproject():
    assert qnnweb.__version__ == VERSION
    assert "__version__ =" not in (REPO / "py_frontend" / "qnnweb" / "__init__.py").read_text()


def test_the_installable_wheel_has_sources_and_kernels_and_the_sdist_too():
    names = set(zipfile.ZipFile(dist(f"qnnweb-{VERSION}-py3-none-any.whl")).namelist())
    assert {"qnnweb/__init__.py", "qnnweb/cli/__init__.py", "qnnweb/wasm/qnnweb-relaxed.wasm",
            "qnnweb/wasm/qnnweb-scalar-threads.wasm", "qnnweb/js/qnnweb.js", "qnnweb/importers/onnx-ml.desc"} <= names
    assert not any(n.endswith(".pyc") for n in names)
    entry_points = zipfile.ZipFile(dist(f"qnnweb-{VERSION}-py3-none-any.whl")).read(
        f"qnnweb-{VERSION}.dist-info/entry_points.txt").decode()
    assert "qnnweb = qnnweb.cli:main" in entry_points
    members = set(tarfile.open(dist(f"qnnweb-{VERSION}.tar.gz")).getnames())
    root = f"qnnweb-{VERSION}"
    assert {f"{root}/pyproject.toml", f"{root}/py_frontend/qnnweb/__init__.py",
            f"{root}/py_frontend/qnnweb/wasm/qnnweb-relaxed.wasm"} <= members


def test_a_fresh_virtualenv_installs_the_wheel_and_runs_a_model(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, env=clean_env(), timeout=300)
    python, env = venv / "bin" / "python", clean_env()
    # the dependencies (flatbuffers, tflite, protobuf, wasmtime) from PyPI: no CPython wheels of them are kept here
    install = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              dist(f"qnnweb-{VERSION}-py3-none-any.whl")],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert install.returncode == 0, install.stderr
    model = require(DATA_DIR / "models" / "visual_wake_words.tflite")
    script = f"""
import json, sys, qnnweb
model = qnnweb.load(open({str(model)!r}, "rb").read())
(out,) = model.run(bytes(model.inputs[0].nbytes))
print(json.dumps({{"file": qnnweb.__file__, "version": qnnweb.__version__, "path": sys.path, "out": bytes(out).hex()}}))
"""
    ran = subprocess.run([python, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert ran.returncode == 0, ran.stderr
    got = json.loads(ran.stdout)
    assert got["file"].startswith(str(venv)) and got["version"] == VERSION
    assert not any(p.startswith(str(REPO)) for p in got["path"]), got["path"]
    (expected,) = qnnweb.load(model).run(bytes(4 * 96 * 96 * 3))
    assert got["out"] == expected.tobytes().hex()
    info = subprocess.run([venv / "bin" / "qnnweb", "info", model], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert info.returncode == 0 and "CONV_2D: 14" in info.stdout and "supported: yes" in info.stdout, info.stderr
    run = subprocess.run([venv / "bin" / "qnnweb", "run", model], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)   # no numpy in this virtualenv: outputs are array.array
    assert run.returncode == 0 and "random inputs" in run.stdout and "non_person" in run.stdout, run.stderr


def test_the_pyodide_wheel_is_not_for_this_python():
    """Its .pyc are Pyodide's Python's bytecode: its tag names that Python, which this CPython's pip refuses."""
    lock = json.loads(require(REPO / ".cache" / "pyodide" / "pyodide-lock.json", "run ./build.sh setup").read_text())
    major, minor = lock["info"]["python"].split(".")[:2]
    pyodide_tag = f"py{major}{minor}-none-any"
    for wheel in pyodide_wheels():   # qnnweb and its dependencies, all compiled by tools/pyodide_bytecode.mjs
        _, _, _, tags = parse_wheel_filename(wheel.name)
        assert {str(t) for t in tags} == {pyodide_tag} and not set(tags) & set(sys_tags()), wheel.name
        archive = zipfile.ZipFile(wheel)
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/WHEEL")]
        assert email.parser.Parser().parsestr(archive.read(metadata).decode()).get_all("Tag") == [pyodide_tag]
    wheel = pyodide_wheels()[-1]
    assert wheel.name == f"qnnweb-{VERSION}-{pyodide_tag}.whl"
    names = zipfile.ZipFile(wheel).namelist()
    assert f"qnnweb-{VERSION}.dist-info/PYODIDE-BYTECODE" in names and "qnnweb/__init__.pyc" in names
    assert not any(n.endswith(".py") for n in names)
    dry_run = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index",
                              "--disable-pip-version-check", wheel], capture_output=True, text=True,
                             env=clean_env(), timeout=300)
    assert dry_run.returncode != 0 and "is not a supported wheel on this platform" in dry_run.stderr, dry_run.stderr
