"""Native onnxruntime and ai-edge-litert in this Python: the "how far from native" line (--native) and
the check that an ONNX model's TFLite twin answers like the ONNX model."""

from __future__ import annotations

import time

import numpy as np

from .models import BenchModel, ModelFileInfo


class NativeSlot:
    """Native onnxruntime / ai-edge-litert in this process, on `threads` threads (their own pools:
    onnxruntime's intra-op threads, XNNPACK's pthreadpool), so a run's 1 -> 2 thread gain can be read
    against what native code gets on the same machine in the same rounds."""

    def __init__(self, engine: str, model: BenchModel, file: ModelFileInfo, threads: int = 1):
        self.engine, self.model, self.file = engine, model, file
        self.variant = None
        self.threads = threads
        self.session = None   # native onnxruntime's ReferenceSession
        self.ok = False
        self.record: dict = {}
        self.ms: list[float] = []
        self.kernel_ms: list[float | None] = []

    def _create(self):
        if self.engine == "native-onnxruntime":
            # the reference session of the model tests: where this CPU's u8s8 path saturates
            # (AMD EPYC without AVX-VNNI), it runs the model's exact int8 twin
            from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

            # its threads do not spin on after a run: they would share a vCPU with the round's next engine
            # (~25 ms of a core; XNNPACK's pool spins ~1 ms)
            sess = self.session = ReferenceSession(self.file.bytes, threads=self.threads, spinning=False)
            if sess.twin:
                self.record["note"] = "onnxruntime's u8s8 path saturates on this CPU: ran the exact int8 twin"
            name = sess.session.get_inputs()[0].name
            dtype = {"float32": np.float32, "int8": np.int8, "uint8": np.uint8}[self.file.input.dtype]
            x = np.frombuffer(self.file.input_bytes, dtype=dtype).reshape(self.file.input.shape)

            def run():
                return sess.run({name: x})[0]
            return run
        from ai_edge_litert.interpreter import Interpreter

        interp = Interpreter(model_content=self.file.bytes, num_threads=self.threads)
        interp.allocate_tensors()
        d_in = interp.get_input_details()[0]
        d_out = interp.get_output_details()[0]
        x = np.frombuffer(self.file.input_bytes, dtype=d_in["dtype"]).reshape(d_in["shape"])

        def run():
            interp.set_tensor(d_in["index"], x)
            interp.invoke()
            return interp.get_tensor(d_out["index"])
        return run

    def start(self, warmup: int) -> None:
        try:
            t0 = time.perf_counter()
            run = self._create()
            out = run()
            cold = (time.perf_counter() - t0) * 1000
            t0 = time.perf_counter()
            run = self._create()
            out = run()
            warm = (time.perf_counter() - t0) * 1000
            for _ in range(warmup):
                run()
            self.run_fn = run
            out = np.ascontiguousarray(out)
            dtype = str(out.dtype)
            self.scores = self.model.scores(out.tobytes(), dtype, self.file)
            self.record.update(ttfi_ms=cold, ttfi_warm_ms=warm, wasm=None,
                               info={"what": f"native, in CPython, {self.threads} thread(s); "
                                             "ttfi = session creation + first run"})
            self.ok = True
        except Exception as exc:
            self.record["error"] = f"{type(exc).__name__}: {exc}"

    def run(self, n: int):
        ms = []
        for _ in range(n):
            t0 = time.perf_counter()
            self.run_fn()
            ms.append((time.perf_counter() - t0) * 1000)
        return ms, [None] * n

    def close(self):
        self.run_fn = None
