/**
 * Checkpoint bytes: a small self-describing container of named float32 arrays plus JSON
 * metadata, so a checkpoint can live in a Postgres bytea column or a file and be read back
 * without TensorFlow.js file I/O (which needs tfjs-node).
 *
 *   "STARLAB1" | u32 header length | header JSON (utf-8) | padding to 4 bytes | float32 data
 */
const MAGIC = 'STARLAB1';

export interface CheckpointContents<M> {
  meta: M;
  arrays: Map<string, { shape: number[]; data: Float32Array }>;
}

interface Header<M> {
  meta: M;
  arrays: { name: string; shape: number[]; offset: number; length: number }[];
}

export function encodeCheckpoint<M>(contents: CheckpointContents<M>): Uint8Array {
  const arrays: Header<M>['arrays'] = [];
  let offset = 0;
  for (const [name, { shape, data }] of contents.arrays) {
    arrays.push({ name, shape, offset, length: data.length });
    offset += data.length;
  }
  const header = new TextEncoder().encode(JSON.stringify({ meta: contents.meta, arrays } satisfies Header<M>));
  const dataStart = align4(MAGIC.length + 4 + header.length);
  const bytes = new Uint8Array(dataStart + offset * 4);
  bytes.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(bytes.buffer).setUint32(MAGIC.length, header.length, true);
  bytes.set(header, MAGIC.length + 4);
  const floats = new Float32Array(bytes.buffer, dataStart, offset);
  for (const entry of arrays) floats.set(contents.arrays.get(entry.name)!.data, entry.offset);
  return bytes;
}

export function decodeCheckpoint<M>(bytes: Uint8Array): CheckpointContents<M> {
  if (bytes.length < MAGIC.length + 4 || new TextDecoder().decode(bytes.subarray(0, MAGIC.length)) !== MAGIC) {
    throw new Error('not a StarLab checkpoint');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(MAGIC.length, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(MAGIC.length + 4, MAGIC.length + 4 + headerLength))) as Header<M>;
  const dataStart = align4(MAGIC.length + 4 + headerLength);
  // Copy into an aligned buffer: the input may be a view at any byte offset (e.g. from Postgres).
  const payload = bytes.slice(dataStart);
  const floats = new Float32Array(payload.buffer, payload.byteOffset, payload.byteLength / 4);
  const arrays = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const entry of header.arrays) {
    arrays.set(entry.name, { shape: entry.shape, data: floats.slice(entry.offset, entry.offset + entry.length) });
  }
  return { meta: header.meta, arrays };
}

function align4(n: number): number {
  return (n + 3) & ~3;
}
