"""tools/bench/text_encoder.py on the reduced BERT fixture: it runs both engines at each length and reports the
comparison (the measurements of docs/performance-log.md come from it on the full-size model)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_text_encoder_tool_reports_each_length():
    model = ROOT / "tests" / "data" / "onnx" / "text_encoders" / "bert_dynamic_axes_q8_u8.onnx"
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "bench" / "text_encoder.py"), str(model),
                           "--lengths", "8", "3", "--rounds", "2", "--variant", "scalar"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[1:]] == ["length 8", "length 3"]
    for line in lines[1:]:   # bit-exact where onnxruntime runs MLAS's FMA3 softmax; within the bar anywhere
        written = re.search(r"vs the graph as written: (bit-exact|([0-9.]+)% within the bar)", line)
        assert written and (written.group(2) is None or float(written.group(2)) >= 99.9), line
