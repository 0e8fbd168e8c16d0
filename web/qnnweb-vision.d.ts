// Types of qnnweb-vision.js (the npm package's "qnnweb/vision"): detection, landmark and segmentation
// post-processing, the JavaScript twin of the Python package's qnnweb.vision. Written by hand: keep in
// step with the module.

/** [ymin, xmin, ymax, xmax] in the model input's normalized [0, 1] coordinates. */
export type Box = [number, number, number, number];

export interface Detection {
  box: Box;
  score: number;
  /** [x, y] per keypoint */
  keypoints: [number, number][];
  label: number;
}

/** A detector sidecar's `postprocess` settings (ssdDetections). */
export interface SsdPostprocess {
  anchors?: { input_size: number; strides: number[]; anchors_per_cell: number[]; offset?: number };
  /** the names of the box regressor and score outputs */
  boxes?: string;
  scores?: string;
  keypoints?: number;
  min_score?: number;
  iou_threshold?: number;
  max_detections?: number | null;
  weighted?: boolean;
}

/** Anchor centres [x, y] of MediaPipe's SsdAnchorsCalculator with fixed anchor sizes. */
export function ssdAnchors(inputSize: number, strides: readonly number[], anchorsPerCell: readonly number[],
  offset?: number): [number, number][];

/** MediaPipe's TensorsToDetectionsCalculator: the detections whose sigmoid score reaches minScore. */
export function decodeBoxes(raw: ArrayLike<number>, scores: ArrayLike<number>, anchors: [number, number][],
  inputSize: number, keypoints?: number, minScore?: number, scoreClip?: number): Detection[];

/** Intersection over union of two boxes. */
export function iou(a: Box, b: Box): number;

/** Non-maximum suppression, best score first; `weighted` is MediaPipe's WEIGHTED mode. */
export function nms(detections: Detection[], iouThreshold?: number, maxDetections?: number | null,
  weighted?: boolean): Detection[];

/** A detector's detections as its sidecar's `postprocess` says; `outputs` maps output names to
 * dequantized values. */
export function ssdDetections(outputs: Record<string, ArrayLike<number>>, postprocess?: SsdPostprocess): Detection[];

/** Flat landmarks (x, y[, z] per point, in input pixels) normalized to the image the roi was cut from. */
export function scaleLandmarks(values: ArrayLike<number>, inputSize: number, roi?: Box, dims?: 2 | 3): number[][];

/** The best class of every pixel of a [H, W, classes] (or, channelsFirst, [classes, H, W]) score map;
 * -1 where the best score is below minScore. */
export function maskArgmax(scores: ArrayLike<number>, height: number, width: number, classes: number,
  channelsFirst?: boolean, minScore?: number | null): number[];

/** The logistic function. */
export function sigmoid(x: number): number;

/** TFLite_Detection_PostProcess's settings (camelCase). */
export interface DetectionPostprocessOptions {
  numClasses: number;
  maxDetections: number;
  maxClassesPerDetection?: number;
  detectionsPerClass?: number;
  useRegularNms?: boolean;
  nmsScoreThreshold?: number;
  nmsIouThreshold?: number;
  yScale?: number;
  xScale?: number;
  hScale?: number;
  wScale?: number;
}

/** TFLite's TFLite_Detection_PostProcess with its kernel's arithmetic, for SSD models exported without
 * the op: boxes (y, x, h, w, ... per anchor), scores per anchor, anchors (y, x, h, w), flat and dequantized. */
export function detectionPostprocess(boxes: ArrayLike<number>, scores: ArrayLike<number>, anchors: ArrayLike<number>,
  options: DetectionPostprocessOptions): { boxes: Box[]; classes: number[]; scores: number[]; count: number };
