"""A dynamically quantized text encoder (transformers.js's "q8" ONNX file) in CPython: qnnweb (wasmtime,
one variant and thread count) against onnxruntime's CPU provider on the same file and feeds, per sequence
length. Interleaved rounds; prints per length the median run time of each, the time of the first run at a
new length (qnnweb loads the model again for it), and how qnnweb's output compares with onnxruntime's graph
as written (ORT_ENABLE_BASIC) and with its default session (its fusions round otherwise).

    .venv/bin/python tools/bench/text_encoder.py MODEL.onnx [--lengths 16 128] [--rounds 10]
        [--variant relaxed] [--threads 1]

Make a MiniLM-L6-shaped MODEL with tools/models/converters/make_text_encoder_fixtures.py --minilm DIR. The
browser engines are `./build.sh bench`'s (tools/bench/bench.py)."""

import argparse
import statistics
import time

import numpy as np
import onnx
import onnxruntime

import qnnweb


def feeds(names, length, vocabulary, rng):
    values = {"input_ids": rng.integers(0, vocabulary, (1, length)).astype(np.int64),
              "attention_mask": np.ones((1, length), np.int64), "token_type_ids": np.zeros((1, length), np.int64)}
    return {name: values[name] for name in names}


def within_bar(got, want):
    return float((np.abs(got - want) <= np.maximum(1e-3 * np.abs(want), 1e-5)).mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 128])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--variant", default="relaxed")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    data = open(args.model, "rb").read()
    model = onnx.load_from_string(data)
    names = [i.name for i in model.graph.input]
    vocabulary = next(i.dims[0] for i in model.graph.initializer if "word_embeddings" in i.name and len(i.dims) == 2)
    ours = qnnweb.load(data, variant=args.variant, threads=args.threads)   # loads again for each new length
    sessions = {}
    for level in ("ORT_ENABLE_BASIC", "ORT_ENABLE_ALL"):
        o = onnxruntime.SessionOptions()
        o.graph_optimization_level = getattr(onnxruntime.GraphOptimizationLevel, level)
        o.intra_op_num_threads = args.threads
        sessions[level] = onnxruntime.InferenceSession(data, o, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    print(f"{args.model}: qnnweb {args.variant} x{args.threads} (wasmtime) vs onnxruntime {onnxruntime.__version__} "
          f"CPU x{args.threads}")
    for length in args.lengths:
        inputs = feeds(names, length, vocabulary, rng)
        start = time.perf_counter()
        got = ours.run(inputs)[0]
        first = time.perf_counter() - start
        times = {"qnnweb": [], "onnxruntime": []}
        for _ in range(args.rounds):
            for name, run in (("qnnweb", lambda: ours.run(inputs)),
                              ("onnxruntime", lambda: sessions["ORT_ENABLE_ALL"].run(None, inputs))):
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
        basic, default = (sessions[level].run(None, inputs)[0] for level in ("ORT_ENABLE_BASIC", "ORT_ENABLE_ALL"))
        q, o = (statistics.median(times[k]) * 1000 for k in ("qnnweb", "onnxruntime"))
        print(f"length {length}: qnnweb {q:.1f} ms (first run, loading for the length: {first * 1000:.0f} ms), "
              f"onnxruntime {o:.1f} ms, ratio {q / o:.2f}; vs the graph as written: "
              f"{'bit-exact' if np.array_equal(got, basic) else f'{within_bar(got, basic):.2%} within the bar'}; "
              f"vs the default session: {within_bar(got, default):.2%} within the bar "
              f"(the default vs the graph as written: {within_bar(default, basic):.2%})")


if __name__ == "__main__":
    main()
