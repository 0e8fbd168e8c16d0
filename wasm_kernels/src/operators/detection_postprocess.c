/* TFLite_Detection_PostProcess (TF Object Detection API SSD models): decode each anchor's
 * centre-size box encoding, then non-maximum suppression, as TFLite's kernel
 * (tensorflow/lite/kernels/detection_postprocess.cc) computes them, step for step:
 *   ycenter = (float) (y / y_scale * anchor_h + anchor_y), in double; half_h = (float) (0.5 *
 *   exp(h / h_scale) * anchor_h), in double (likewise x, w); the corners in float;
 *   scores at or above score_threshold, stably sorted by decreasing score; a box is dropped when its
 *   float IoU with a kept box exceeds iou_threshold.
 * Fast NMS: per anchor the best max_classes_per_detection classes (the first maximum when 1, else
 * std::partial_sort's order, ties included: libstdc++'s heap select and heap sort, as the reference was
 * built with), NMS over each anchor's best score. Regular NMS: NMS per class (at most
 * detections_per_class each), the best max_detections over all classes, equal scores in the order
 * they were found (what ai-edge-litert gives: 79 of 79 random cases, none with a partial sort).
 * Inputs and outputs are float32 (the frontend dequantizes quantized inputs first, as TFLite does);
 * detection slots past num_detections are zero. One thread: the op is a few thousand comparisons. */
#include "qnnweb.h"
#include "common.h"
#include "operators.h"

/* Runs once per inference on a few thousand anchors, next to convolutions that take 100x longer:
 * compiled for size (the relaxed module's 128 KiB budget). minsize changes no float arithmetic. */
#pragma clang attribute push(__attribute__((minsize)), apply_to = function)

struct detection_postprocess_op {
  struct qnn_op base;
  const float* boxes;       /* [anchors, box_stride] */
  const float* scores;      /* [anchors, classes_with_background] */
  const float* anchors;     /* [anchors, 4]: y, x, h, w (plan memory) */
  float* output_boxes;      /* [slots, 4] */
  float* output_classes;    /* [slots] */
  float* output_scores;     /* [slots] */
  float* output_count;      /* [1] */
  int32_t anchor_count, box_stride, classes_with_background, classes, label_offset;
  int32_t max_detections, max_classes_per_detection, detections_per_class, regular_nms;
  float score_threshold, iou_threshold;
  double y_scale, x_scale, h_scale, w_scale;
  /* scratch (plan memory) */
  float* decoded;           /* [anchors, 4]: ymin, xmin, ymax, xmax */
  float* class_scores;      /* [anchors]: the scores one NMS pass sees */
  float* kept_scores;       /* [anchors] */
  int32_t* kept_indices;    /* [anchors] */
  int32_t* order;           /* [anchors + max_detections] */
  int32_t* merge;           /* [anchors + max_detections]: the stable sort's buffer */
  uint8_t* active;          /* [anchors] */
  int32_t* selected;        /* [anchors] */
  int32_t* best_classes;    /* fast: [anchors, categories] */
  int32_t* merged_indices;  /* regular: [anchors + max_detections] (anchor * classes_with_background + class) */
  float* merged_scores;     /* regular: [anchors + max_detections] */
};

/* exp(x) in double to within an ulp or two (the result is rounded to float after a product, so it
 * matches a libm's exp there): x = k ln2 + r, |r| <= ln2 / 2, a degree-13 Taylor polynomial in r,
 * times 2^k. No libm in these modules. */
static double exp_double(double x) {
  if (x != x) return x;
  if (x > 709.78) return __builtin_inf();
  if (x < -745.2) return 0.0;
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  const double k = __builtin_floor(x * 1.44269504088896338700 + 0.5);
  const double r = (x - k * ln2_hi) - k * ln2_lo;
  double p = 1.0 / 6227020800.0;  /* 1 / 13! */
  static const double inverse_factorials[] = {
      1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0,
      1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0};
  for (int i = 0; i < 13; i++) p = p * r + inverse_factorials[i];
  /* 2^k as two factors, so that k down to -1074 and up to 1023 stay exact */
  int64_t n = (int64_t) k;
  const int64_t half = n / 2;
  union { uint64_t bits; double value; } a = {(uint64_t) (half + 1023) << 52}, b = {(uint64_t) (n - half + 1023) << 52};
  return p * a.value * b.value;
}

static float max_f(float a, float b) { return a > b ? a : b; }
static float min_f(float a, float b) { return a < b ? a : b; }

/* TFLite's ComputeIntersectionOverUnion, in float. */
static float intersection_over_union(const float* a, const float* b) {
  const float area_a = (a[2] - a[0]) * (a[3] - a[1]);
  const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float ymin = max_f(a[0], b[0]), xmin = max_f(a[1], b[1]);
  const float ymax = min_f(a[2], b[2]), xmax = min_f(a[3], b[3]);
  const float intersection = max_f(ymax - ymin, 0.0f) * max_f(xmax - xmin, 0.0f);
  return intersection / (area_a + area_b - intersection);
}

/* indices[0..count) ordered by decreasing values[indices[i]], equal values in their given order
 * (std::stable_sort): a bottom-up merge sort through `buffer`. */
static void stable_sort_decreasing(const float* values, int32_t* indices, int32_t* buffer, int32_t count) {
  for (int32_t width = 1; width < count; width *= 2) {
    for (int32_t lo = 0; lo < count; lo += 2 * width) {
      const int32_t mid = qnn_min_i32(lo + width, count), hi = qnn_min_i32(lo + 2 * width, count);
      int32_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) buffer[k++] = values[indices[j]] > values[indices[i]] ? indices[j++] : indices[i++];
      while (i < mid) buffer[k++] = indices[i++];
      while (j < hi) buffer[k++] = indices[j++];
    }
    qnn_memcpy(indices, buffer, (size_t) count * sizeof(int32_t));
  }
}

/* TFLite's NonMaxSuppressionSingleClassHelper over op->class_scores: the anchors it keeps, best first,
 * into op->selected; returns how many (at most max_detections). */
static int32_t single_class_nms(const struct detection_postprocess_op* op, int32_t max_detections) {
  int32_t kept = 0;
  for (int32_t i = 0; i < op->anchor_count; i++) {
    if (op->class_scores[i] >= op->score_threshold) {
      op->kept_scores[kept] = op->class_scores[i];
      op->kept_indices[kept] = i;
      kept++;
    }
  }
  for (int32_t i = 0; i < kept; i++) op->order[i] = i;
  stable_sort_decreasing(op->kept_scores, op->order, op->merge, kept);
  const int32_t output_size = qnn_min_i32(kept, max_detections);
  int32_t active_count = kept, selected = 0;
  qnn_memset(op->active, 1, (size_t) kept);
  for (int32_t i = 0; i < kept; i++) {
    if (active_count == 0 || selected >= output_size) break;
    if (!op->active[i]) continue;
    const int32_t anchor = op->kept_indices[op->order[i]];
    op->selected[selected++] = anchor;
    op->active[i] = 0;
    active_count--;
    for (int32_t j = i + 1; j < kept; j++) {
      if (op->active[j] && intersection_over_union(op->decoded + 4 * anchor,
                                                   op->decoded + 4 * op->kept_indices[op->order[j]]) > op->iou_threshold) {
        op->active[j] = 0;
        active_count--;
      }
    }
  }
  return selected;
}

/* libstdc++'s std::partial_sort (bits/stl_heap.h, stl_algo.h: __heap_select, then __sort_heap) of
 * index arrays under TFLite's comparator "values[i] > values[j]": where values tie, the order it leaves
 * is this algorithm's, so it is followed step for step. */
#define GREATER(a, b) (values[a] > values[b])

static void push_heap(const float* values, int32_t* first, int32_t hole, int32_t top, int32_t value) {
  int32_t parent = (hole - 1) / 2;
  while (hole > top && GREATER(first[parent], value)) {
    first[hole] = first[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  first[hole] = value;
}

static void adjust_heap(const float* values, int32_t* first, int32_t hole, int32_t len, int32_t value) {
  const int32_t top = hole;
  int32_t child = hole;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (GREATER(first[child], first[child - 1])) child--;
    first[hole] = first[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    first[hole] = first[child - 1];
    hole = child - 1;
  }
  push_heap(values, first, hole, top, value);
}

static void pop_heap(const float* values, int32_t* first, int32_t len, int32_t* result) {
  const int32_t value = *result;
  *result = first[0];
  adjust_heap(values, first, 0, len, value);
}

static void partial_sort_decreasing(const float* values, int32_t* indices, int32_t middle, int32_t count) {
  if (middle >= 2) {  /* make_heap */
    for (int32_t parent = (middle - 2) / 2;; parent--) {
      adjust_heap(values, indices, parent, middle, indices[parent]);
      if (parent == 0) break;
    }
  }
  for (int32_t i = middle; i < count; i++) {
    if (GREATER(indices[i], indices[0])) pop_heap(values, indices, middle, indices + i);
  }
  for (int32_t last = middle; last > 1;) {  /* sort_heap */
    last--;
    pop_heap(values, indices, last, indices + last);
  }
}

#undef GREATER

/* TFLite's DecreasingPartialArgSort: indices[0..count) of the `count` best of values[0..n), best first
 * (ArgMaxVector, the first maximum, for one). */
static void best_indices(const float* values, int32_t n, int32_t count, int32_t* indices) {
  if (count == 1) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; i++) if (values[i] > values[best]) best = i;
    indices[0] = best;
    return;
  }
  for (int32_t i = 0; i < n; i++) indices[i] = i;
  partial_sort_decreasing(values, indices, count, n);
}

static void write_detection(const struct detection_postprocess_op* op, int32_t slot, int32_t anchor, int32_t cls,
                            float score) {
  qnn_memcpy(op->output_boxes + 4 * slot, op->decoded + 4 * anchor, 4 * sizeof(float));
  op->output_classes[slot] = (float) cls;
  op->output_scores[slot] = score;
}

static void fast_nms(const struct detection_postprocess_op* op) {
  const int32_t categories = qnn_min_i32(op->max_classes_per_detection, op->classes);
  for (int32_t a = 0; a < op->anchor_count; a++) {
    const float* scores = op->scores + (size_t) a * op->classes_with_background + op->label_offset;
    int32_t* best = op->best_classes + (size_t) a * op->classes;
    best_indices(scores, op->classes, categories, best);
    op->class_scores[a] = scores[best[0]];
  }
  const int32_t selected = single_class_nms(op, op->max_detections);
  for (int32_t s = 0; s < selected; s++) {
    const int32_t a = op->selected[s];
    const float* scores = op->scores + (size_t) a * op->classes_with_background + op->label_offset;
    const int32_t* best = op->best_classes + (size_t) a * op->classes;
    for (int32_t c = 0; c < categories; c++) write_detection(op, op->max_classes_per_detection * s + c, a, best[c], scores[best[c]]);
  }
  *op->output_count = (float) selected;
}

static void regular_nms(const struct detection_postprocess_op* op) {
  int32_t merged = 0;
  for (int32_t c = 0; c < op->classes; c++) {
    for (int32_t a = 0; a < op->anchor_count; a++) {
      op->class_scores[a] = op->scores[(size_t) a * op->classes_with_background + c + op->label_offset];
    }
    const int32_t selected = single_class_nms(op, op->detections_per_class);
    int32_t count = merged;
    for (int32_t s = 0; s < selected; s++, count++) {
      op->merged_indices[count] = op->selected[s] * op->classes_with_background + c + op->label_offset;
      op->merged_scores[count] = op->class_scores[op->selected[s]];
    }
    /* the best max_detections so far, best first, equal scores in the order they were added (measured:
     * ai-edge-litert's regular NMS keeps them so, unlike its fast NMS's partial sort) */
    const int32_t keep = qnn_min_i32(count, op->max_detections);
    for (int32_t i = 0; i < count; i++) op->order[i] = i;
    stable_sort_decreasing(op->merged_scores, op->order, op->merge, count);
    for (int32_t i = 0; i < keep; i++) {
      op->merge[i] = op->merged_indices[op->order[i]];
      op->class_scores[i] = op->merged_scores[op->order[i]];
    }
    for (int32_t i = 0; i < keep; i++) {
      op->merged_indices[i] = op->merge[i];
      op->merged_scores[i] = op->class_scores[i];
    }
    merged = keep;
  }
  for (int32_t s = 0; s < merged; s++) {
    const int32_t a = op->merged_indices[s] / op->classes_with_background;
    write_detection(op, s, a, op->merged_indices[s] - a * op->classes_with_background - op->label_offset,
                    op->merged_scores[s]);
  }
  *op->output_count = (float) merged;
}

QNN_PLAN_CODE int32_t qnn_create_detection_postprocess(struct qnn_plan* plan, const void* record, struct qnn_op** result) {
  const struct qnn_detection_postprocess_record* r = record;
  const char* what = "detection_postprocess";
  if (!qnn_check_positive(&r->anchor_count, 7, what)) return QNN_ERROR_INVALID_RECORD;
  if (r->box_stride < 4 || r->classes_with_background < r->classes || r->classes_with_background > r->classes + 1 ||
      !(r->iou_threshold > 0.0f && r->iou_threshold <= 1.0f) || r->score_threshold != r->score_threshold) {
    qnn_set_error2(what, ": box_stride < 4, classes_with_background not classes or classes + 1, or a threshold "
                         "outside its range");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t n = r->anchor_count;
  const int64_t slots = (int64_t) r->max_detections * r->max_classes_per_detection;
  struct detection_postprocess_op* op = qnn_plan_alloc(plan, sizeof(struct detection_postprocess_op));
  if (op == NULL) return QNN_ERROR_OUT_OF_MEMORY;
  op->boxes = (const float*) qnn_plan_tensor(plan, r->boxes, n * r->box_stride * 4, "detection_postprocess boxes");
  op->scores = (const float*) qnn_plan_tensor(plan, r->scores, n * r->classes_with_background * 4,
                                              "detection_postprocess scores");
  op->output_boxes = (float*) qnn_plan_tensor(plan, r->output_boxes, slots * 16, "detection_postprocess output boxes");
  op->output_classes = (float*) qnn_plan_tensor(plan, r->output_classes, slots * 4, "detection_postprocess output classes");
  op->output_scores = (float*) qnn_plan_tensor(plan, r->output_scores, slots * 4, "detection_postprocess output scores");
  op->output_count = (float*) qnn_plan_tensor(plan, r->output_count, 4, "detection_postprocess output count");
  const float* anchors = qnn_plan_constant(r->anchors, n * 16, "detection_postprocess anchors");
  if (op->boxes == NULL || op->scores == NULL || op->output_boxes == NULL || op->output_classes == NULL ||
      op->output_scores == NULL || op->output_count == NULL || anchors == NULL) {
    return QNN_ERROR_INVALID_RECORD;
  }
  if (((r->boxes | r->scores | r->output_boxes | r->output_classes | r->output_scores | r->output_count) & 3) != 0) {
    qnn_set_error2(what, ": a float32 tensor not 4-byte aligned in the arena");
    return QNN_ERROR_INVALID_RECORD;
  }
  const int64_t merged = n + r->max_detections;
  float* copy = qnn_plan_alloc(plan, n * 16);
  op->decoded = qnn_plan_alloc(plan, n * 16);
  op->class_scores = qnn_plan_alloc(plan, merged * 4);
  op->kept_scores = qnn_plan_alloc(plan, n * 4);
  op->kept_indices = qnn_plan_alloc(plan, n * 4);
  op->order = qnn_plan_alloc(plan, merged * 4);
  op->merge = qnn_plan_alloc(plan, (merged > r->classes ? merged : r->classes) * 4);
  op->active = qnn_plan_alloc(plan, n);
  op->selected = qnn_plan_alloc(plan, n * 4);
  op->best_classes = r->regular_nms ? NULL : qnn_plan_alloc(plan, n * r->classes * 4);
  op->merged_indices = r->regular_nms ? qnn_plan_alloc(plan, merged * 4) : NULL;
  op->merged_scores = r->regular_nms ? qnn_plan_alloc(plan, merged * 4) : NULL;
  if (copy == NULL || op->decoded == NULL || op->class_scores == NULL || op->kept_scores == NULL ||
      op->kept_indices == NULL || op->order == NULL || op->merge == NULL || op->active == NULL ||
      op->selected == NULL || (r->regular_nms ? op->merged_indices == NULL || op->merged_scores == NULL
                                              : op->best_classes == NULL)) {
    return QNN_ERROR_OUT_OF_MEMORY;
  }
  for (int64_t i = 0; i < n; i++) {
    /* TFLite refuses an inverted box at every run (ValidateBoxes): with a negative anchor size */
    if (!(anchors[4 * i + 2] >= 0.0f && anchors[4 * i + 3] >= 0.0f)) {
      qnn_set_error2(what, ": an anchor with a negative or NaN height or width");
      return QNN_ERROR_INVALID_RECORD;
    }
  }
  qnn_memcpy(copy, anchors, (size_t) n * 16);
  op->anchors = copy;
  op->anchor_count = r->anchor_count;
  op->box_stride = r->box_stride;
  op->classes_with_background = r->classes_with_background;
  op->classes = r->classes;
  op->label_offset = r->classes_with_background - r->classes;
  op->max_detections = r->max_detections;
  op->max_classes_per_detection = r->max_classes_per_detection;
  op->detections_per_class = r->detections_per_class;
  op->regular_nms = r->regular_nms != 0;
  op->score_threshold = r->score_threshold;
  op->iou_threshold = r->iou_threshold;
  op->y_scale = r->y_scale;
  op->x_scale = r->x_scale;
  op->h_scale = r->h_scale;
  op->w_scale = r->w_scale;
  *result = &op->base;
  return QNN_OK;
}

void qnn_run_detection_postprocess(const struct qnn_op* base) {
  const struct detection_postprocess_op* op = (const struct detection_postprocess_op*) base;
  for (int32_t i = 0; i < op->anchor_count; i++) {
    const float* box = op->boxes + (size_t) i * op->box_stride;
    const float* anchor = op->anchors + 4 * i;
    const float ycenter = (float) ((double) box[0] / op->y_scale * (double) anchor[2] + (double) anchor[0]);
    const float xcenter = (float) ((double) box[1] / op->x_scale * (double) anchor[3] + (double) anchor[1]);
    const float half_h = (float) (0.5 * exp_double((double) box[2] / op->h_scale) * (double) anchor[2]);
    const float half_w = (float) (0.5 * exp_double((double) box[3] / op->w_scale) * (double) anchor[3]);
    float* out = op->decoded + 4 * i;
    out[0] = ycenter - half_h;
    out[1] = xcenter - half_w;
    out[2] = ycenter + half_h;
    out[3] = xcenter + half_w;
  }
  const size_t slots = (size_t) op->max_detections * (size_t) op->max_classes_per_detection;
  qnn_memset(op->output_boxes, 0, slots * 16);
  qnn_memset(op->output_classes, 0, slots * 4);
  qnn_memset(op->output_scores, 0, slots * 4);
  if (op->regular_nms) regular_nms(op);
  else fast_nms(op);
}

#pragma clang attribute pop
