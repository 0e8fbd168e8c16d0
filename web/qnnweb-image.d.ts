// Types of qnnweb-image.js (the npm package's "qnnweb/image"): image pre- and post-processing, the
// JavaScript twin of the Python package's qnnweb.image. Written by hand: keep in step with the module.

import type { TensorInfo, TensorSpec } from "./qnnweb.js";

/** A sidecar's `preprocess` settings: `resize` the shorter side to this many pixels, then a centred
 * `crop` (a size, or [height, width]; default: the input's size). */
export interface Preprocess {
  resize?: number | null;
  crop?: number | [number, number] | null;
  [setting: string]: unknown;
}

/** What preprocessPlan decides: the resized photo (rw x rh), the window of it kept (x0, y0, cw, ch)
 * and a line of text saying so. */
export interface PreprocessPlan {
  rw: number;
  rh: number;
  x0: number;
  y0: number;
  cw: number;
  ch: number;
  text: string;
}

/** [N, 3, H, W] (ONNX) rather than [N, H, W, 3] (TFLite). */
export function isNCHW(shape: readonly number[]): boolean;

/** How a photo of imgW x imgH becomes a model input of w x h, as `pre` says. */
export function preprocessPlan(pre: Preprocess, imgW: number, imgH: number, w: number, h: number): PreprocessPlan;

/** `src` (inW x inH pixels of `channels` bytes: RGB or RGBA) resized to outW x outH with Pillow's
 * bilinear arithmetic, and the window [x0, x0 + cw) x [y0, y0 + ch) of it as RGB bytes. */
export function resizeCrop(src: ArrayLike<number>, inW: number, inH: number, channels: number, outW: number,
  outH: number, x0: number, y0: number, cw: number, ch: number): Uint8Array;

/** H*W*3 RGB bytes -> the model's input ((pixel - mean) / std, quantized for an int8 input). */
export function rgbToInput(rgb: ArrayLike<number>, tensor: TensorInfo, mean?: readonly number[],
  std?: readonly number[]): Float32Array | Int8Array;

/** Output values as numbers (float32 as is, int8 dequantized with the tensor's scale and zero point). */
export function dequantize(output: ArrayLike<number>, tensor: TensorSpec): number[];

/** An image-to-image model's output ([1, 3, H, W] or [1, H, W, 3]) as RGB bytes, valueRange mapped to 0..255. */
export function outputToRGB(values: ArrayLike<number>, shape: readonly number[],
  valueRange?: [number, number]): { rgb: Uint8Array; width: number; height: number };

export function softmax(values: number[]): number[];

/** The k best classes as [index, score], best first; `logits` applies a softmax first. */
export function topK(scores: number[], k?: number, logits?: boolean): [number, number][];
