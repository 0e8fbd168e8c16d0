"""./build.sh bench: qnnweb against LiteRT.js and ONNX Runtime Web in headless Chromium (the
``benchmark`` package next to this file; ``--help``, README "Performance")."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the tools' import root (tools/README.md)

from bench.benchmark.runner import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
