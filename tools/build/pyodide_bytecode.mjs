// Precompiles Python to bytecode *inside Pyodide* (so the .pyc match its CPython, 3.14 for
// pyodide 314), which saves Pyodide compiling every module from source at each visit:
//
//   node tools/build/pyodide_bytecode.mjs PYODIDE_DIR STDLIB_OUT [WHEEL ...]
//
// - PYODIDE_DIR/python_stdlib.zip -> STDLIB_OUT: every .py replaced by an unchecked hash-based .pyc
//   (what loadPyodide({stdLibURL}) takes; zipimport loads sourceless .pyc);
// - each WHEEL is rewritten in place the same way (RECORD updated), with a PYODIDE-BYTECODE file in
//   its .dist-info naming the Pyodide version; a wheel that has it already is left alone.
// A module that does not compile (test data with deliberate syntax errors) keeps its source.
import { readFileSync, writeFileSync } from "node:fs";
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


def convert(data, prefix, wheel):
    """(new zip bytes, modules compiled) or (None, 0) for a wheel converted before."""
    data = data.to_bytes()   # a JavaScript Uint8Array
    zin = zipfile.ZipFile(io.BytesIO(data))
    names = zin.namelist()
    if wheel and any(n.endswith(".dist-info/" + MARKER) for n in names):
        return None, 0
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
        entries.append((info, body))
    if wheel:
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/RECORD"))
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
  if (data === null || data === undefined) {
    console.log(`${path.basename(src)}: bytecode already`);
    return;
  }
  writeFileSync(dst, data);
  console.log(`${path.basename(dst)}: ${compiled} modules compiled by Pyodide ${version}`);
}

const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
const stdlibZip = pyodide.runPython("import sys; next(p for p in sys.path if p.endswith('.zip'))");
run(path.join(pyodideDir, "python_stdlib.zip"), stdlibOut, stdlibZip + "/", false);
for (const wheel of wheels) run(wheel, wheel, sitePackages + "/", true);
