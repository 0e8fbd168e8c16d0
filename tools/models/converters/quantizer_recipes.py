"""ai-edge-quantizer's recipes for the TFLite fixtures (make_tflite_fixtures.py): every full-int8 mode it offers
(RECIPES, built by make_recipe) and its other modes, which qnnweb refuses (OTHER_MODES)."""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------------
# Recipes: every full-int8 mode (int8 weights and int8 activations) ai-edge-quantizer offers. Its
# policy (default_policy.py, "static_wi8_ai8") allows int8 activations symmetric or asymmetric (per
# tensor) and symmetric int8 weights per channel or per tensor; the algorithms that quantize every op
# kind are min/max (the default) and OCTAV (clipped weight ranges); MSE/GPTQ/OSCAR only cover
# FULLY_CONNECTED/CONV (the rest would stay float) and Hadamard rotation makes custom ops.
# ---------------------------------------------------------------------------------------------------

RECIPES = {
    "mmpc": ("MIN_MAX_UNIFORM_QUANT", "CHANNELWISE", False,
             "recipe.static_wi8_ai8(): min/max, int8 weights per channel, asymmetric int8 activations"),
    "mmpt": ("MIN_MAX_UNIFORM_QUANT", "TENSORWISE", False,
             "add_static_config(weight_granularity=TENSORWISE): min/max, int8 weights per tensor, "
             "asymmetric int8 activations"),
    "mmpcsym": ("MIN_MAX_UNIFORM_QUANT", "CHANNELWISE", True,
                "min/max, int8 weights per channel, symmetric int8 activations (zero point 0)"),
    "mmptsym": ("MIN_MAX_UNIFORM_QUANT", "TENSORWISE", True,
                "min/max, int8 weights per tensor, symmetric int8 activations (zero point 0)"),
    "octpc": ("OCTAV", "CHANNELWISE", False,
              "OCTAV (clipped weight ranges), int8 weights per channel, asymmetric int8 activations"),
    "octpt": ("OCTAV", "TENSORWISE", False,
              "OCTAV (clipped weight ranges), int8 weights per tensor, asymmetric int8 activations"),
}


# ai-edge-quantizer's modes that are not full int8 (its recipe.py): qnnweb refuses them with what they are
# and how to make the full-int8 file (tests/tflite/test_converter_tflite.py checks the messages).
OTHER_MODES = {
    "dynamic_wi8_afp32": "int8 weights, float activations quantized at run time (dynamic range)",
    "weight_only_wi8_afp32": "int8 weights dequantized to float at load, float activations",
    "static_wi8_ai16": "int8 weights, int16 activations",
}


def make_recipe(name: str):
    from ai_edge_quantizer import algorithm_manager, qtyping, recipe, recipe_manager

    algorithm, granularity, symmetric, _ = RECIPES[name]
    algo = getattr(algorithm_manager.AlgorithmName, algorithm)
    gran = getattr(qtyping.QuantGranularity, granularity)
    manager = recipe_manager.RecipeManager()
    if not symmetric:
        manager.add_static_config(regex=".*", operation_name=qtyping.TFLOperationName.ALL_SUPPORTED,
                                  activation_num_bits=8, weight_num_bits=8, weight_granularity=gran,
                                  algorithm_key=algo)
    else:  # add_static_config always makes int8 activations asymmetric: the same config, symmetric
        manager.add_quantization_config(
            regex=".*", operation_name=qtyping.TFLOperationName.ALL_SUPPORTED,
            op_config=qtyping.OpQuantizationConfig(
                activation_tensor_config=qtyping.TensorQuantizationConfig(num_bits=8, symmetric=True),
                weight_tensor_config=qtyping.TensorQuantizationConfig(num_bits=8, symmetric=True,
                                                                      granularity=gran),
                compute_precision=qtyping.ComputePrecision.INTEGER, explicit_dequantize=False),
            algorithm_key=algo)
    result = manager.get_quantization_recipe()
    if name == "mmpc" and result != recipe.static_wi8_ai8():
        raise SystemExit("recipe 'mmpc' is no longer ai-edge-quantizer's static_wi8_ai8()")
    return result


def with_float_edges(chosen):
    """The recipe ``chosen`` with the model's inputs and outputs left float32 (ai-edge-quantizer's INPUT / OUTPUT
    virtual ops not quantized: a QUANTIZE after each input, a DEQUANTIZE before each output, the rest unchanged),
    for LiteRT.js, whose JavaScript tensors cannot carry int8."""
    from ai_edge_quantizer import algorithm_manager, qtyping, recipe_manager

    manager = recipe_manager.RecipeManager()
    manager.load_quantization_recipe(chosen)
    for edge in (qtyping.TFLOperationName.INPUT, qtyping.TFLOperationName.OUTPUT):
        manager.add_quantization_config(regex=".*", operation_name=edge, op_config=qtyping.OpQuantizationConfig(),
                                        algorithm_key=algorithm_manager.AlgorithmName.NO_QUANTIZE)
    return manager.get_quantization_recipe()
