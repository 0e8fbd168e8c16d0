// Starts Pyodide the fast way, for every page and worker of this server that needs Python: the
// standard library precompiled to bytecode by Pyodide itself (./build.sh build pyodide-bytecode;
// Pyodide otherwise compiles every stdlib module from source at each visit), then, if asked, the
// wheels of /api/wheels (qnnweb and its dependencies, bytecode too) installed in parallel. URLs are
// relative to this module (/static/pyodide-start.js), so a server under a path prefix works as well.
// Pyodide's own files from the URL of its version (the server marks it immutable); the standard
// library's bytecode, which ./build.sh makes, from the revalidated folder.
export const PYODIDE_VERSION = "314.0.7"; // = build.sh's PYODIDE_VERSION (tests/server checks)
const PYODIDE_URL = new URL(`../pyodide/${PYODIDE_VERSION}/`, import.meta.url).href;
export const STDLIB_URL = new URL("../pyodide/python_stdlib_pyc.zip", import.meta.url).href;
const WHEELS_URL = new URL("../api/wheels", import.meta.url).href;

export async function startPyodide({ wheels = true, messageCallback = () => {} } = {}) {
  const [{ loadPyodide }, wheelList] = await Promise.all([
    import(new URL("pyodide.mjs", PYODIDE_URL).href),
    wheels ? fetch(WHEELS_URL).then((r) => {
      if (!r.ok) throw new Error(`${WHEELS_URL}: HTTP ${r.status}`);
      return r.json();
    }) : null,
  ]);
  const pyodide = await loadPyodide({ indexURL: PYODIDE_URL, stdLibURL: STDLIB_URL });
  if (wheelList) {
    const urls = wheelList.wheels.map((u) => new URL(u, location.origin).href);
    await pyodide.loadPackage(urls, { messageCallback, errorCallback: (m) => console.warn(m) });
  }
  return pyodide;
}
