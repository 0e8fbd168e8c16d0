"""Downloading in Pyodide, through the browser's fetch, with progress."""


async def fetch_bytes(url, progress=None):
    from js import fetch

    response = await fetch(url)
    if not response.ok:
        raise OSError(f"could not download {url}: HTTP {response.status} {response.statusText}")
    if progress is None:  # one copy out of JavaScript, no round trip per chunk
        return (await response.arrayBuffer()).to_bytes()
    total = int(response.headers.get("Content-Length") or 0)
    reader = response.body.getReader()
    chunks, loaded = [], 0
    while True:
        chunk = await reader.read()
        if chunk.done:
            break
        data = chunk.value.to_bytes()
        chunks.append(data)
        loaded += len(data)
        if progress is not None:
            progress(loaded, total)
    return b"".join(chunks)
