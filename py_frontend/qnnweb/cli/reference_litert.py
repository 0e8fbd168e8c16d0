"""ai-edge-litert as the TFLite reference (its default kernels: XNNPACK, one thread), for ``qnnweb
check`` and the model tests."""

from ai_edge_litert.interpreter import Interpreter


def litert_outputs(data, *inputs):
    """Every output of ai-edge-litert (XNNPACK delegate, one thread) on ``inputs``."""
    interpreter = Interpreter(model_content=data, num_threads=1)
    interpreter.allocate_tensors()
    for detail, x in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(detail["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]
