// A memory snapshot of Pyodide with the qnnweb wheels installed and qnnweb imported, which
// web/pyodide-start.js restores instead of starting Python (~1 s less in Chromium): the wasm heap
// after start-up, made *in Pyodide* by its own `makeMemorySnapshot` (a private API of the exact
// Pyodide build: the server offers the snapshot only next to that build and these wheels).
//
//   node tools/build/pyodide_snapshot.mjs PYODIDE_DIR STDLIB_ZIP OUT WHEEL...
//
// - STDLIB_ZIP: the standard library loadPyodide({stdLibURL}) is given; the restore needs the very
//   same bytes (Python's zipimport keeps the zip's directory in memory);
// - OUT: the snapshot; OUT.json, written last: what it was made of (Pyodide version, sha256 of the
//   stdlib zip, of each wheel in install order, and of the snapshot), which the server checks before
//   offering it (so a half-written or stale snapshot is never offered).
// Pyodide's file system is not part of a snapshot: the wheels are kept in the heap by a module
// `_qnnweb_snapshot`, whose restore() writes them back and reseeds the random module
// (pyodide-start.js calls it).
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const [pyodideDir, stdlibZip, out, ...wheels] = process.argv.slice(2);
if (!pyodideDir || !stdlibZip || !out || wheels.length === 0) {
  console.error("usage: node tools/build/pyodide_snapshot.mjs PYODIDE_DIR STDLIB_ZIP OUT WHEEL...");
  process.exit(2);
}
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const { loadPyodide } = await import(path.resolve(pyodideDir, "pyodide.mjs"));
const pyodide = await loadPyodide({
  indexURL: path.resolve(pyodideDir) + "/",
  stdLibURL: path.resolve(stdlibZip),
  _makeSnapshot: true,
});

// The wheels are pure Python: imported straight from their zips on sys.path (zipimport, as Pyodide's
// own stdlib; importlib.resources and importlib.metadata read zips too), so that the restore writes
// back four files instead of hundreds (~10 ms instead of ~0.1 s in Chromium). Not pyodide.loadPackage: used
// before a snapshot, it breaks the restore (pyodide#5195).
const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
const made = [];
for (const wheel of wheels) {
  const bytes = new Uint8Array(readFileSync(wheel));
  const where = `${sitePackages}/${path.basename(wheel)}`;
  pyodide.FS.writeFile(where, bytes);
  pyodide.runPython(`import sys; sys.path.append(${JSON.stringify(where)})`);
  made.push({ name: path.basename(wheel), sha256: sha256(bytes) });
}

pyodide.runPython(`
import os, sys, types

RESTORE = '''
import os, sys


def restore():
    """Writes the wheels back (the file system is not in the snapshot), then reseeds the random
    module, whose state the snapshot froze for every visitor. (time.timezone and time.tzname stay
    those of the machine that made the snapshot: Pyodide's time module has no tzset.)"""
    for path, data in FILES.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    FILES.clear()  # (the importers' caches stay valid: the same bytes at the same paths)
    if "random" in sys.modules:
        sys.modules["random"].seed()
'''

files = {}
for path in sys.path:
    if path.endswith(".whl"):
        with open(path, "rb") as f:
            files[path] = f.read()
module = types.ModuleType("_qnnweb_snapshot", "The wheels of a Pyodide memory snapshot (tools/build/pyodide_snapshot.mjs).")
exec(RESTORE, module.__dict__)
module.FILES = files
sys.modules["_qnnweb_snapshot"] = module

# what a first inference from Python needs (the readers of raw TFLite / ONNX files stay lazy), and
# the package data it reads (cached: reading a zip's directory costs ~8 ms a file in Chromium). Not
# which variants the engine validates: that is the browser's to say.
import qnnweb, qnnweb.compiled, qnnweb.fetch, qnnweb.image, qnnweb.kernels, qnnweb.model, qnnweb.vision
import qnnweb.host.pyodide_host
for variant in qnnweb.kernels.VARIANTS:
    for threaded in (False, True):
        qnnweb.kernels.wasm_bytes(variant, threaded)
qnnweb.host.pyodide_host.runtime_source()
`);

// Most of the heap's pages are zeros (~55 %): the file holds only the others, so the browser receives,
// decodes and copies half the bytes. Layout (little-endian): "qnnwsnap", u32 format 1, u32 the
// snapshot's length, u32 N, N x (u32 offset, u32 length), then those N runs of bytes in order
// (web/pyodide-start.js expands it).
function withoutZeroPages(snapshot, page = 4096) {
  const runs = [];
  for (let at = 0; at < snapshot.length; at += page) {
    const end = Math.min(at + page, snapshot.length);
    if (snapshot.subarray(at, end).every((b) => b === 0)) continue;
    const last = runs[runs.length - 1];
    if (last && last[0] + last[1] === at) last[1] += end - at;
    else runs.push([at, end - at]);
  }
  const head = 20 + 8 * runs.length;
  const file = new Uint8Array(head + runs.reduce((n, [, length]) => n + length, 0));
  const view = new DataView(file.buffer);
  file.set(new TextEncoder().encode("qnnwsnap"));
  view.setUint32(8, 1, true);
  view.setUint32(12, snapshot.length, true);
  view.setUint32(16, runs.length, true);
  let at = head;
  runs.forEach(([offset, length], i) => {
    view.setUint32(20 + 8 * i, offset, true);
    view.setUint32(24 + 8 * i, length, true);
    file.set(snapshot.subarray(offset, offset + length), at);
    at += length;
  });
  return file;
}

const snapshot = pyodide.makeMemorySnapshot();
const file = withoutZeroPages(snapshot);
writeFileSync(out, file);
const manifest = {
  pyodide: pyodide.version,
  stdlib: { name: path.basename(stdlibZip), sha256: sha256(readFileSync(stdlibZip)) },
  wheels: made,
  snapshot: { name: path.basename(out), sha256: sha256(file), bytes: snapshot.length },
};
writeFileSync(out + ".json", JSON.stringify(manifest, null, 2) + "\n");
console.log(`${path.basename(out)}: ${(file.length / 2 ** 20).toFixed(1)} of ${(snapshot.length / 2 ** 20).toFixed(1)} MiB, Pyodide ${pyodide.version}, ${made.length} wheels`);
