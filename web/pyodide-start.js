// Starts Pyodide the fast way, for every page and worker of this server that needs Python: the
// standard library precompiled to bytecode by Pyodide itself (./build.sh build pyodide-bytecode;
// Pyodide otherwise compiles every stdlib module from source at each visit) and the server's lock
// file (/api/wheels/pyodide-lock.json: Pyodide's packages and the qnnweb wheels, so that
// `pyodide.loadPackage("qnnweb")` works by name), then, if asked, qnnweb and its dependencies
// (bytecode wheels too) installed by name, in parallel — or, where the server has one, its memory
// snapshot of exactly that restored (qnnweb already imported; Python can tell by
// `"_qnnweb_snapshot" in sys.modules`). Without the lock file (not built) the wheels of /api/wheels
// are installed by URL. URLs are relative to this module (/static/pyodide-start.js), so a server
// under a path prefix works as well.
// Pyodide's own files from the URL of its version (the server marks it immutable); the standard
// library's bytecode, which ./build.sh makes, from the revalidated folder.
export const PYODIDE_VERSION = "314.0.7"; // = build.sh's PYODIDE_VERSION (tests/server checks)
const PYODIDE_URL = new URL(`../pyodide/${PYODIDE_VERSION}/`, import.meta.url).href;
export const STDLIB_URL = new URL("../pyodide/python_stdlib_pyc.zip", import.meta.url).href;
const WHEELS_URL = new URL("../api/wheels", import.meta.url).href;
export const LOCK_URL = new URL("../api/wheels/pyodide-lock.json", import.meta.url).href;

export async function startPyodide({ wheels = true, messageCallback = () => {} } = {}) {
  const [{ loadPyodide }, wheelList, lock] = await Promise.all([
    import(new URL("pyodide.mjs", PYODIDE_URL).href),
    wheels ? fetch(WHEELS_URL).then((r) => {
      if (!r.ok) throw new Error(`${WHEELS_URL}: HTTP ${r.status}`);
      return r.json();
    }) : null,
    fetch(LOCK_URL).then((r) => (r.ok ? r.json() : null)).catch(() => null),
  ]);
  if (!lock) console.warn(`${LOCK_URL} unavailable: Pyodide starts with its own lock file`);
  // Every file name in the server's lock file is a URL of the server: no packageBaseUrl needed.
  const options = { indexURL: PYODIDE_URL, stdLibURL: STDLIB_URL, ...(lock ? { lockFileContents: lock } : {}) };
  if (wheelList && wheelList.snapshot) {
    // The server's memory snapshot of this Pyodide with these wheels installed and qnnweb imported
    // (tools/build/pyodide_snapshot.mjs): restoring it skips Python's start-up and the wheels' install.
    // Anything wrong with it (a private Pyodide API) and Python starts the usual way.
    try {
      const snapshot = fetch(new URL(wheelList.snapshot, location.origin)).then((r) => {
        if (!r.ok) throw new Error(`${wheelList.snapshot}: HTTP ${r.status}`);
        return r.arrayBuffer();
      }).then(withZeroPages);
      const pyodide = await loadPyodide({ ...options, _loadSnapshot: snapshot });
      pyodide.runPython("import _qnnweb_snapshot; _qnnweb_snapshot.restore()");
      return pyodide;
    } catch (err) {
      console.warn(`Pyodide snapshot not used (${err && err.message ? err.message : err}): starting Python`);
    }
  }
  // By name, Pyodide downloads qnnweb and its dependencies while it starts Python.
  const byName = Boolean(wheelList && lock && lock.packages.qnnweb);
  const pyodide = await loadPyodide({ ...options, ...(byName ? { packages: ["qnnweb"] } : {}) });
  if (wheelList && !byName) {
    const urls = wheelList.wheels.map((u) => new URL(u, location.origin).href);
    await pyodide.loadPackage(urls, { messageCallback, errorCallback: (m) => console.warn(m) });
  }
  return pyodide;
}

// The snapshot as tools/build/pyodide_snapshot.mjs stores it, without its zero pages: "qnnwsnap", u32
// format 1, u32 the snapshot's length, u32 N, N x (u32 offset, u32 length), then the N runs.
function withZeroPages(buffer) {
  const view = new DataView(buffer);
  const magic = new TextDecoder().decode(new Uint8Array(buffer, 0, Math.min(8, buffer.byteLength)));
  if (magic !== "qnnwsnap" || view.getUint32(8, true) !== 1) throw new Error("not a qnnweb Pyodide snapshot");
  const snapshot = new Uint8Array(view.getUint32(12, true));
  const count = view.getUint32(16, true);
  let at = 20 + 8 * count;
  for (let i = 0; i < count; i++) {
    const offset = view.getUint32(20 + 8 * i, true), length = view.getUint32(24 + 8 * i, true);
    if (at + length > buffer.byteLength || offset + length > snapshot.length) throw new Error("truncated Pyodide snapshot");
    snapshot.set(new Uint8Array(buffer, at, length), offset);
    at += length;
  }
  return snapshot;
}
