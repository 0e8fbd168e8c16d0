// Starts Pyodide the fast way, for every page and worker of this server that needs Python: the
// standard library precompiled to bytecode by Pyodide itself (./build.sh build pyodide-bytecode;
// Pyodide otherwise compiles every stdlib module from source at each visit), then, if asked, the
// wheels of /api/wheels (qnnweb and its dependencies, bytecode too) installed in parallel.
export const STDLIB_URL = "/pyodide/python_stdlib_pyc.zip";

export async function startPyodide({ wheels = true, messageCallback = () => {} } = {}) {
  const [{ loadPyodide }, wheelList] = await Promise.all([
    import("/pyodide/pyodide.mjs"),
    wheels ? fetch("/api/wheels").then((r) => {
      if (!r.ok) throw new Error(`/api/wheels: HTTP ${r.status}`);
      return r.json();
    }) : null,
  ]);
  const pyodide = await loadPyodide({ indexURL: "/pyodide/", stdLibURL: STDLIB_URL });
  if (wheelList) {
    const urls = wheelList.wheels.map((u) => new URL(u, location.origin).href);
    await pyodide.loadPackage(urls, { messageCallback, errorCallback: (m) => console.warn(m) });
  }
  return pyodide;
}
