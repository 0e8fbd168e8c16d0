// Precompiles Python to bytecode *inside Pyodide* (so the .pyc match its CPython, 3.14 for
// pyodide 314), which saves Pyodide compiling every module from source at each visit:
//
//   node tools/build/pyodide_bytecode.mjs PYODIDE_DIR STDLIB_OUT [WHEEL ...]
//
// - PYODIDE_DIR/python_stdlib.zip -> STDLIB_OUT: every .py replaced by an unchecked hash-based .pyc
//   (what loadPyodide({stdLibURL}) takes; zipimport loads sourceless .pyc);
// - each WHEEL is rewritten the same way (RECORD updated), with a PYODIDE-BYTECODE file in its
//   .dist-info naming the Pyodide version, and renamed to the tag of Pyodide's Python (py314-none-any:
//   the .pyc are that version's bytecode, so no other CPython's installer may take it for a
//   pure-Python wheel; pyodide-lock accepts a py3X tag, not pyodide-build's cp3X-none-any); the
//   original is removed. A wheel that has the marker already (an older build's) is only retagged.
// A module that does not compile (test data with deliberate syntax errors) keeps its source.
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

const [pyodideDir, stdlibOut, ...wheels] = process.argv.slice(2);
if (!pyodideDir || !stdlibOut) {
  console.error("usage: node tools/build/pyodide_bytecode.mjs PYODIDE_DIR STDLIB_OUT [WHEEL ...]");
  process.exit(2);
}
const { loadPyodide } = await import(path.resolve(pyodideDir, "pyodide.mjs"));
const pyodide = await loadPyodide({ indexURL: path.resolve(pyodideDir) + "/" });

const PYTHON = `
import base64, csv, hashlib, importlib.util, io, sys, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

MARKER = "PYODIDE-BYTECODE"


def pyc(source, filename):
    code = compile(source, filename, "exec", dont_inherit=True)
    return bytes(_code_to_hash_pyc(code, importlib.util.source_hash(source), checked=False))


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


PYTHON_TAG = f"py{sys.version_info.major}{sys.version_info.minor}"


def retag(wheel_text):
    """A .dist-info/WHEEL file with its tags replaced by this Python's: one pure-Python wheel."""
    lines = [line for line in wheel_text.splitlines() if line.strip() and not line.startswith("Tag:")]
    return "\\n".join(lines + [f"Tag: {PYTHON_TAG}-none-any"]) + "\\n"


def bytecode_name(name):
    """name-version[-build]-python-abi-platform.whl -> the same with this Python's tag."""
    parts = name[:-len(".whl")].split("-")
    if parts[-2:] != ["none", "any"]:
        raise ValueError(f"{name}: not a pure-Python wheel")
    return "-".join(parts[:-3] + [PYTHON_TAG, "none", "any"]) + ".whl"


def convert(data, prefix, wheel):
    """(new zip bytes, modules compiled). A wheel converted before (its marker there) is only retagged."""
    data = data.to_bytes()   # a JavaScript Uint8Array
    zin = zipfile.ZipFile(io.BytesIO(data))
    names = zin.namelist()
    converted_before = any(n.endswith(".dist-info/" + MARKER) for n in names)
    entries, compiled = [], 0
    for info in zin.infolist():
        body = zin.read(info)
        if info.filename.endswith(".py"):
            try:
                body = pyc(body, prefix + info.filename)
                info = zipfile.ZipInfo(info.filename[:-3] + ".pyc", info.date_time)
                compiled += 1
            except SyntaxError:
                pass
        if wheel and info.filename.endswith(".dist-info/WHEEL"):
            body = retag(body.decode()).encode()
        entries.append((info, body))
    if wheel:
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/RECORD"))
        if not converted_before:
            entries.append((zipfile.ZipInfo(dist_info + "/" + MARKER, (2020, 1, 1, 0, 0, 0)),
                            f"pyodide {sys.version.split()[0]}\\n".encode()))
        rows = [[i.filename, record_hash(b), str(len(b))] for i, b in entries if not i.filename.endswith("/RECORD")]
        out = io.StringIO()
        csv.writer(out, lineterminator="\\n").writerows(rows + [[dist_info + "/RECORD", "", ""]])
        entries = [(i, out.getvalue().encode() if i.filename.endswith("/RECORD") else b) for i, b in entries]
    result = io.BytesIO()
    with zipfile.ZipFile(result, "w", zipfile.ZIP_DEFLATED) as zout:
        for info, body in entries:
            info.compress_type = zipfile.ZIP_DEFLATED
            zout.writestr(info, body)
    return result.getvalue(), compiled
`;
pyodide.runPython(PYTHON);
const convert = pyodide.globals.get("convert");
const version = pyodide.version;

function run(src, dst, prefix, wheel) {
  const proxy = convert(new Uint8Array(readFileSync(src)), prefix, wheel);
  const [data, compiled] = proxy.toJs();
  proxy.destroy();
  writeFileSync(dst, data);
  if (wheel && dst !== src) unlinkSync(src); // renamed (the stdlib's source stays: it is the input)
  console.log(`${path.basename(dst)}: ${compiled} modules compiled by Pyodide ${version}`);
}

const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
const stdlibZip = pyodide.runPython("import sys; next(p for p in sys.path if p.endswith('.zip'))");
run(path.join(pyodideDir, "python_stdlib.zip"), stdlibOut, stdlibZip + "/", false);
const bytecodeName = pyodide.globals.get("bytecode_name");
for (const wheel of wheels) {
  run(wheel, path.join(path.dirname(wheel), bytecodeName(path.basename(wheel))), sitePackages + "/", true);
}
