"""The browser benchmark behind ``./build.sh bench`` (``tools/bench/bench.py``): qnnweb against
LiteRT.js and ONNX Runtime Web on the same int8 models, in headless Chromium, in one run (see ``--help``
and README "Performance").

What it does:

1. Models: the paths given with ``--model`` (.onnx or .tflite), default the prepared demo models
   ``data/models/efficientnet_lite0_u8s8.onnx`` and ``mobilenet_v2_u8s8.onnx``. For an ONNX model,
   LiteRT.js runs its TFLite twin, made by ``qnnweb.exporters.export_tflite`` (int8 weights, float32
   in/out) and written to ``OUT/twins/``; native ``ai-edge-litert`` checks that the twin gives the
   same top-5 as native onnxruntime on the sample photo. An engine that cannot read a model is
   recorded with ``error`` saying why.
2. Input: ``data/samples/coffee.png`` resized and cropped as the model's ``.json`` sidecar says
   (Pillow bilinear), normalised and laid out for each model file by ``qnnweb.image.rgb_to_input``
   (so every engine gets the very same input tensor); without a sidecar the photo is resized to the
   input size and scaled to [-1, 1].
3. A qnnweb server (COOP/COEP) on a free 127.0.0.1 port serves everything: the bench page
   ``web/bench/`` (one engine, one model per page), Pyodide, the wheels, the npm engines under
   ``/vendor/``, the models and the inputs (a temporary folder).
4. Headless Chromium (Playwright): per engine x variant x model x threads, time to first inference
   cold (fresh browser context: empty HTTP cache) and warm (reload in that context); then, all
   pages of a model kept open, ``--runs`` rounds interleaved (A, B, C, A, B, C ...), one inference
   per engine per round, after ``--warmup`` runs. Per round each engine's time divided by qnnweb's
   (``relaxed``, else the fastest variant) on as many threads in the same round; the record has the
   median ratio.
5. ``--native``: native onnxruntime and ai-edge-litert in this Python (at each ``--threads`` count) in the same rounds.
6. Writes ``OUT/bench.json`` (list of records), ``OUT/bench.md`` (table with date, machine,
   versions), ``OUT/bench.png`` (matplotlib) and ``OUT/bench_meta.json``.

Modules: ``common`` (paths, engines, logging), ``models`` (model files, inputs, scores), ``native`` and
``browser`` (one engine on one model each), ``environment`` (server, prerequisites, versions),
``runner`` (arguments, the rounds), ``report`` (the files written).
"""
