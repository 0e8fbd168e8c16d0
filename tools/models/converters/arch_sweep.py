#!/usr/bin/env python3
"""Where qnnweb stands on the vision models people choose today: each architecture of
arch_sweep_models.ARCHITECTURES (timm's efficient families, ultralytics' YOLO11n / YOLOv8n) with realistic
random weights, exported to ONNX (opset 17, or --opset), quantized by onnxruntime's quantize_static in each mode of
arch_sweep_onnx.MODES, calibrated on the sample photos, then loaded by qnnweb: either it refuses (its
UnsupportedModelError's problems, counted by op kind) or it runs and is compared with onnxruntime on the
photos (bit-exact share, worst difference in quanta of the output).

Writes DIR/arch-sweep.md and DIR/arch-sweep.json (rewritten after each architecture, so an interrupted sweep
keeps what it measured) and prints the tables. Run it through ``./build.sh arch-sweep [ARGS]``, which makes
its virtualenv .cache/arch-sweep-venv on demand (see docs/arch-sweep.md); ``--help`` lists the options.
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import sys
import tempfile
import time
import traceback
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "build.sh").is_file())
VERSIONED = ["torch", "timm", "ultralytics", "torchvision", "onnx", "onnxruntime", "numpy"]


def log(msg: str) -> None:
    print(f"[arch-sweep] {msg}", file=sys.stderr, flush=True)


def refuse_remote_connections() -> None:
    """Every socket connection outside this machine fails with a clear error: the sweep must download
    nothing (no weights, no ultralytics asset), and this proves it does not."""
    connect = socket.socket.connect

    def local_only(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("localhost", "::1") and not host.startswith("127.") \
                and self.family != socket.AF_UNIX:
            log(f"refused a connection to {address} (arch-sweep downloads nothing)")
            raise ConnectionRefusedError(f"arch-sweep downloads nothing: connection to {address} refused")
        return connect(self, address)

    socket.socket.connect = local_only


try:
    import numpy as np
    import qnnweb
    from qnnweb.cli.reference_onnx import ReferenceSession   # the reference the tests and `qnnweb check` use
    import arch_sweep_models as models
    import arch_sweep_onnx as ox
    import arch_sample
    import arch_sweep_report as report
except ImportError as exc:   # run outside its virtualenv
    sys.exit(f"arch-sweep: {exc} -- run it with ./build.sh arch-sweep, which makes its virtualenv "
             f".cache/arch-sweep-venv (torch, timm, ultralytics, onnxruntime)")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="./build.sh arch-sweep", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    names = [a.name for a in models.ARCHITECTURES]
    parser.add_argument("--archs", type=int, metavar="N", help="only the first N architectures of the list")
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=names,
                        help=f"only these architectures: {', '.join(names)}")
    parser.add_argument("--modes", nargs="+", metavar="MODE", choices=list(ox.MODES_BY_NAME),
                        default=list(ox.MODES_BY_NAME),
                        help="quantization modes (default: all): "
                             + "; ".join(f"{m.name}: {m.about}" for m in ox.MODES))
    parser.add_argument("--small", action="store_true",
                        help=f"{models.SMALL_SIZE}x{models.SMALL_SIZE} inputs ({models.SMALL_CLASSES} classes for timm "
                             "models) instead of each model's default: a quick sample")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "arch-sweep", help="report folder")
    parser.add_argument("--samples", type=Path, default=ROOT / "data" / "samples",
                        help="photos to calibrate and compare on (default data/samples)")
    parser.add_argument("--fixtures", type=Path, metavar="DIR",
                        help="instead of sweeping, remake the CI sample (reduced-width copies of the architectures, "
                             "tools/models/converters/arch_sample.py) in DIR, e.g. tests/data/onnx/arch_sample")
    parser.add_argument("--variant", choices=list(qnnweb.VARIANTS), help="qnnweb kernel variant (default: the best)")
    parser.add_argument("--opset", type=int, default=ox.OPSET, choices=range(13, 21), metavar="N",
                        help=f"the ONNX opset to export at, 13 to 20 (default {ox.OPSET}; before 17 torch writes "
                             "LayerNorm out as float ops)")
    args = parser.parse_args(argv)
    if args.archs is not None and args.archs < 1:
        parser.error("--archs takes a count of 1 or more")
    chosen = [a for a in models.ARCHITECTURES if not args.only or a.name in args.only]
    args.architectures = chosen[:args.archs] if args.archs is not None else chosen
    return args


def _error_row(arch, mode, stage, exc, **extra) -> dict:
    message = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    return {"arch": arch, "mode": mode, "status": "error", "stage": stage, "error": message[:300], **extra}


def compare(loaded, session, inputs) -> dict:
    """qnnweb's outputs against onnxruntime's on each input: bit-exact share over every output element,
    worst difference in quanta of the first output (None when its quantum is unknown), worst absolute
    difference."""
    quantum = ox.output_quantum(loaded._graph)
    equal = total = 0
    worst_quanta, max_abs = 0.0, 0.0
    for x in inputs:
        feed = x[None]
        theirs = session.run({ox.INPUT_NAME: feed})
        ours = loaded.run(feed)
        for k, (got, want) in enumerate(zip(ours, theirs, strict=True)):
            got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
            if got.shape != want.shape:
                raise ValueError(f"output {k}: qnnweb shape {got.shape}, onnxruntime {want.shape}")
            equal += int((got == want).sum())
            total += got.size
            diff = np.abs(got - want)
            max_abs = max(max_abs, float(diff.max(initial=0)))
            if k == 0 and quantum:
                worst_quanta = max(worst_quanta, float(np.round(diff / quantum).max(initial=0)))
    return {"exact_share": equal / total if total else 0.0, "worst_quanta": worst_quanta if quantum else None,
            "max_abs_diff": max_abs, "quantum": quantum}


def sweep_mode(arch_name, mode, float_path, calibration, inputs, variant) -> dict:
    base = {"arch": arch_name, "mode": mode.name}
    t0 = time.perf_counter()
    try:
        data = ox.quantize(float_path, mode, calibration)
    except Exception as exc:  # noqa: BLE001  (a sweep records every failure and goes on)
        return _error_row(arch_name, mode.name, "quantize", exc)
    base["ops"] = ox.op_counts(data)
    base["float_ops"] = ox.float_ops(data)
    base["model_bytes"] = len(data)
    try:
        loaded = qnnweb.load(data, variant=variant)
    except qnnweb.UnsupportedModelError as exc:
        constant = ox.load_time_nodes(data)
        counts, foldable, reasons = {}, {}, {}
        for _index, op_type, reason in exc.problems:
            kind, _, node = op_type.partition(" ")   # the importer names the node after its type: "Erf '/mlp/Erf'"
            counts[kind] = counts.get(kind, 0) + 1
            foldable[kind] = foldable.get(kind, 0) + (node.strip("'") in constant)
            reasons.setdefault(kind, set()).add(reason)
        return {**base, "status": "refused", "refused_ops": counts, "foldable_ops": foldable,
                "reasons": {op: sorted(r) for op, r in reasons.items()}, "seconds": round(time.perf_counter() - t0, 1)}
    except Exception as exc:  # noqa: BLE001
        return {**base, **_error_row(arch_name, mode.name, "qnnweb.load", exc)}
    try:
        with loaded:
            result = compare(loaded, ReferenceSession(data, uint8_mul_add=True), inputs)
            used_variant = loaded.info().get("variant")
    except Exception as exc:  # noqa: BLE001
        return {**base, **_error_row(arch_name, mode.name, "run", exc)}
    return {**base, "status": "ran", "variant": used_variant, **result, "seconds": round(time.perf_counter() - t0, 1)}


def sweep_arch(arch, modes, photos, small, variant, opset, tmp: Path) -> list[dict]:
    t0 = time.perf_counter()
    try:
        built = models.build(arch, photos, small)
    except Exception as exc:  # noqa: BLE001
        log(f"{arch.name}: building failed: {exc!r}")
        return [_error_row(arch.name, m.name, "build", exc) for m in modes]
    size = built.input_shape[-1]
    float_path = tmp / f"{arch.name}.onnx"
    try:
        ox.export(built.model, built.input_shape, float_path, opset)
    except Exception as exc:  # noqa: BLE001
        log(f"{arch.name}: export failed: {exc!r}")
        return [_error_row(arch.name, m.name, "export", exc, model=built.timm_name) for m in modes]
    log(f"{arch.name} ({built.timm_name}, {size}x{size}, {built.note}): built and exported in "
        f"{time.perf_counter() - t0:.0f} s, float ops {ox.op_counts(float_path.read_bytes())}")
    calibration = models.photo_inputs(photos, size, built.mean, built.std, crops_per_photo=1, seed=1)
    inputs = models.photo_inputs(photos, size, built.mean, built.std)
    rows = []
    for mode in modes:
        row = sweep_mode(arch.name, mode, float_path, calibration, inputs, variant)
        row.update(model=built.timm_name, input=list(built.input_shape), note=built.note)
        log(f"{arch.name} {mode.name}: " + " ".join(report.row_cells(row)[2:]))
        rows.append(row)
    return rows


def header(args) -> dict:
    versions = {}
    for name in VERSIONED:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": cpu_model(),
            "command": "./build.sh arch-sweep " + " ".join(sys.argv[1:]),
            "inputs": f"{models.SMALL_SIZE}x{models.SMALL_SIZE} (--small)" if args.small else "each model's default",
            "photos": os.path.relpath(args.samples, ROOT), "opset": str(args.opset),
            "versions": ", ".join(f"{k} {v}" for k, v in versions.items()),
            "modes": "; ".join(f"{m}: {ox.MODES_BY_NAME[m].about}" for m in args.modes)}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv=None) -> int:
    args = parse_args(argv)
    refuse_remote_connections()
    os.environ.setdefault("YOLO_CONFIG_DIR", str(ROOT / ".cache" / "arch-sweep-ultralytics"))
    if args.fixtures:
        manifest = arch_sample.make(args.fixtures, args.samples, log)
        log(f"{len(manifest['architectures'])} architectures written to {args.fixtures}")
        return 0
    photos = models.photo_paths(args.samples)
    modes = [ox.MODES_BY_NAME[m] for m in args.modes]
    args.out.mkdir(parents=True, exist_ok=True)
    head = header(args)
    log(f"{len(args.architectures)} architecture(s) x {len(modes)} mode(s), {len(photos)} photos, report in {args.out}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for arch in args.architectures:
            try:
                rows += sweep_arch(arch, modes, photos, args.small, args.variant, args.opset, Path(tmp))
            except Exception as exc:  # noqa: BLE001  (a bug of the sweep itself: keep going, keep the trace)
                traceback.print_exc()
                rows += [_error_row(arch.name, m.name, "sweep", exc) for m in modes]
            (args.out / "arch-sweep.md").write_text(report.markdown(head, rows))
            (args.out / "arch-sweep.json").write_text(report.json_text(head, rows))
    print(report.markdown(head, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
