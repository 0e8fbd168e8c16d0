// Types of qnnweb.js, the JavaScript runtime (the npm package's main module). Written by hand: keep
// them in step with qnnweb.js (tests/browser/test_npm_package.py checks both export the same names).

/** A kernel variant, best first: relaxed SIMD, SIMD128, plain scalar WebAssembly. */
export type Variant = "relaxed" | "simd128" | "scalar";
/** The element types of a model's inputs and outputs (int64: a text encoder's ids and masks). */
export type DType = "float32" | "int8" | "uint8" | "int32" | "int64";
/** The typed array of each DType. */
export type TypedArrayOf = {
  float32: Float32Array;
  int8: Int8Array;
  uint8: Uint8Array;
  int32: Int32Array;
  int64: BigInt64Array;
};
export type TensorArray = Float32Array | Int8Array | Uint8Array | Int32Array | BigInt64Array;

/** What load() reads a compiled model (.qnn) from: a URL (fetched), a Response or a promise of one
 * (a fetch the page started early), or the file's bytes. */
export type ModelSource = string | URL | Response | Promise<Response> | ArrayBuffer | ArrayBufferView;

/** One tensor per input (or output): a typed array of its dtype (or its raw bytes in a Uint8Array);
 * a single one for a model with one; a list in the model's order; or by name. */
export type TensorArgs = ArrayBufferView | ArrayBufferView[] | Record<string, ArrayBufferView>;

/** The kernel variants, best first. */
export const VARIANTS: readonly Variant[];
/** The .qnn format version this runtime reads. */
export const FORMAT_VERSION: number;
/** The kernel ABI version this runtime's models are compiled for. */
export const ABI_VERSION: number;
/** The most threads the kernels run. */
export const MAX_THREADS: number;

/** A model file that cannot be loaded (corrupt, another format or ABI version, refused by the kernels). */
export class ModelError extends Error {
  constructor(message: string);
  name: "ModelError";
}

/** The variants this engine validates, best first (few-byte probe modules, nothing downloaded). */
export function supportedVariants(): Variant[];

/** Where the kernel modules (qnnweb-VARIANT[-threads].wasm) are by default: the folder kernels/
 * beside the folder of this module (the package's kernels/; the qnnweb server's /kernels/). */
export function defaultKernelsURL(): string;

/** The thread count load() runs by default: min(4, cores) on a cross-origin isolated page, else 1. */
export function defaultThreads(): number;

/** How many of `requested` threads can run here, and why not all (`note` is null when all can). */
export function threadSupport(requested: number): { threads: number; note: string | null };

/** The kernel module of a variant, compiled once per page (a streaming compile of its URL under
 * `kernelsURL`); `threaded`: its build for several threads. */
export function kernelModule(variant: Variant, kernelsURL?: string | URL, threaded?: boolean): Promise<WebAssembly.Module>;

/** An instance of a kernel module: its exports, its memory, and with threads > 1 the pool's Workers
 * (`ready`: how many threads run once they started; `close()` ends them). */
export interface Kernels {
  readonly memory: WebAssembly.Memory;
  threads: number;
  readonly ready: Promise<number>;
  close(): void;
  readonly [exportName: string]: unknown;
}

/** A new instance of a compiled kernel module (the one place kernels are instantiated in a browser). */
export function instantiateModule(module: WebAssembly.Module, options?: { threads?: number }): Kernels;

/** The same from a module's bytes, synchronously (the Python package's Pyodide host calls it). */
export function instantiateKernelsFromBytes(bytes: BufferSource, threads?: number): Kernels;

/** The header and metadata of a .qnn file, checked (a ModelError says what is wrong). */
export function parseCompiled(bytes: Uint8Array): { meta: CompiledMetadata; body: Uint8Array };

/** A tensor of a model as written in the .qnn file. */
export interface TensorSpec {
  name: string;
  shape: number[];
  dtype: DType;
  /** the quantization of an int8 / uint8 tensor (null or absent for a float one) */
  scale?: number | null;
  zero_point?: number | null;
  /** an input of ids: the rows of the embedding table they pick (run() refuses ids outside [-rows, rows)) */
  index_rows?: number;
}

/** A model's input or output: its spec, where it lives in the arena, its element and byte counts. */
export interface TensorInfo extends TensorSpec {
  offset: number;
  size: number;
  nbytes: number;
}

/** The .qnn file's metadata (format documented in the Python package's qnnweb/compiled.py). */
export interface CompiledMetadata {
  arena_bytes: number;
  inputs: (TensorSpec & { offset: number })[];
  outputs: (TensorSpec & { offset: number })[];
  steps: [string, number, string, string][];
  batches: number[][];
  staging: [number, number];
  describe: { format: string; inputs: unknown[]; outputs: unknown[]; ops: { index: number; type: string }[] };
  /** what qnnweb.compile(metadata=...) stored: labels, preprocessing, task... */
  metadata?: Record<string, unknown>;
  /** a streaming model's resource variables: where each lives in the arena and the bytes (base64) a
   * stream starts from (absent: the model keeps no state between runs) */
  state?: { name: string; offset: number; initial: string }[];
}

/** Where load() spent its time, in ms. */
export interface LoadTimes {
  download: number;
  parse: number;
  kernels_wait: number;
  plan: number;
}

/** What Model.info() reports. */
export interface ModelInfo {
  format: string;
  inputs: TensorSpec[];
  outputs: TensorSpec[];
  ops: { index: number; type: string }[];
  variant: Variant;
  host: string;
  threads: number;
  /** why fewer threads run than were asked for (null: all of them) */
  threads_note: string | null;
  kernels: { gemm: string; dwconv: string };
  arena_bytes: number;
  weight_bytes: number;
  memory_bytes: number;
  metadata: Record<string, unknown>;
  load_ms: LoadTimes | null;
}

/** A loaded model: one plan in one kernel instance. */
export class Model {
  /** load() makes models. */
  protected constructor(exports: Kernels, meta: CompiledMetadata, body: Uint8Array, variant: Variant);
  /** the kernel instance the model runs in */
  readonly exports: Kernels;
  readonly variant: Variant;
  readonly metadata: Record<string, unknown>;
  readonly inputs: TensorInfo[];
  readonly outputs: TensorInfo[];
  /** the last run()'s time in ms (null before the first) */
  lastRunMs: number | null;
  loadTimes: LoadTimes | null;
  threadsNote: string | null;

  /** One inference: returns one new typed array per output (its dtype), or fills and returns
   * `outputs` when given (as the inputs: one, a list or by name). */
  run(inputs: TensorArgs, outputs?: TensorArgs): TensorArray[];
  /** Starts a new stream: a streaming model (one with resource variables, e.g. a wake-word model)
   * forgets what earlier runs left in its state, as if just loaded; other models have nothing to reset. */
  reset(): void;
  /** Ends the model's worker threads (it still runs afterwards, on one thread). */
  close(): void;
  info(): ModelInfo;
}

export interface LoadOptions {
  /** force a variant (an error if this engine cannot run it); default: the best supportedVariants() */
  variant?: Variant | null;
  /** threads to run on (default defaultThreads()); info().threads says how many run */
  threads?: number | null;
  /** where qnnweb-VARIANT[-threads].wasm are served (default defaultKernelsURL()) */
  kernelsURL?: string | URL;
}

/** Load a compiled model (.qnn, made by the Python package's qnnweb.compile or the qnnweb server). */
export function load(source: ModelSource, options?: LoadOptions): Promise<Model>;
