// ort_diff.js: the ONNX Runtime half of tests/ort_diff.sh (see there).
//
//   node ort_diff.js MANIFEST.json
//
// MANIFEST (written by tests/ort_diff.py):
//   { "model": "file.onnx", "out": "folder",
//     "pairs": [["past name", "present name"], ...],
//     "steps": [ { "feeds": { "name": {"type": "float32", "dims": [..],
//                                      "file": "raw little-endian bytes"} } }, ... ] }
//
// Runs the model once per step with that step's feeds.  A pair's past is
// fed from the manifest at step 1 only; every later step feeds the
// present ONNX Runtime returned at the step before (as ONNX Runtime
// GenAI's non-shared mode does: present fed back as the next past).
// A pair listed in "bind" (a shared buffer) has its present bound to the
// past's own tensor (a pre-allocated output: GenAI's shared mode), so
// ONNX Runtime writes the new rows in place.
// Every graph output of step k is written to OUT/step<k>/<index>.bin and
// described in OUT/step<k>/outputs.json ({"name": {"type", "dims",
// "file"}}).  Exit 0 when every step ran; 1 with the message on stderr
// otherwise; 2 when onnxruntime-node cannot be loaded.
'use strict';
const fs = require('fs');
const path = require('path');

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  process.stderr.write(`ort_diff.js: cannot load onnxruntime-node: ${e.message}\n`);
  process.exit(2);
}

// Element types this runner moves: ONNX Runtime's JavaScript type name,
// the typed array that holds it, its size.
const TYPES = {
  float32: [Float32Array, 4], float64: [Float64Array, 8],
  float16: [Uint16Array, 2],           // raw bits (Node has no Float16Array)
  int8: [Int8Array, 1], uint8: [Uint8Array, 1], bool: [Uint8Array, 1],
  int16: [Int16Array, 2], uint16: [Uint16Array, 2],
  int32: [Int32Array, 4], uint32: [Uint32Array, 4],
  int64: [BigInt64Array, 8], uint64: [BigUint64Array, 8],
};

function tensorFromFile(spec, dir) {
  const t = TYPES[spec.type];
  if (!t) throw new Error(`element type ${spec.type} is not supported by this runner`);
  const bytes = fs.readFileSync(path.resolve(dir, spec.file));
  const n = spec.dims.reduce((a, b) => a * b, 1);
  if (bytes.length !== n * t[1])
    throw new Error(`${spec.file}: ${bytes.length} bytes for ${n} elements of ${spec.type}`);
  const buf = new ArrayBuffer(bytes.length);      // aligned copy
  new Uint8Array(buf).set(bytes);
  return new ort.Tensor(spec.type, new t[0](buf, 0, n), spec.dims);
}

function writeTensor(t, file) {
  const data = t.data;   // a typed array over the element bytes
  fs.writeFileSync(file, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
}

async function main() {
  const manifestPath = process.argv[2];
  if (!manifestPath) {
    process.stderr.write('usage: node ort_diff.js MANIFEST.json\n');
    process.exit(2);
  }
  const dir = path.dirname(manifestPath);
  const m = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const session = await ort.InferenceSession.create(path.resolve(dir, m.model), {
    graphOptimizationLevel: 'disabled',    // run the graph as written
    logSeverityLevel: 3,
  });
  const outDir = path.resolve(dir, m.out);
  let previous = null;
  for (let k = 0; k < m.steps.length; k++) {
    const feeds = {};
    for (const [name, spec] of Object.entries(m.steps[k].feeds))
      feeds[name] = tensorFromFile(spec, dir);
    if (previous)
      for (const [past, present] of m.pairs) {
        if (!(present in previous)) throw new Error(`step ${k + 1}: no present '${present}'`);
        feeds[past] = previous[present];
      }
    for (const name of session.inputNames)
      if (!(name in feeds)) throw new Error(`step ${k + 1}: no feed for input '${name}'`);
    let results;
    if (m.bind && m.bind.length) {
      const fetches = {};
      for (const name of session.outputNames) fetches[name] = null;
      for (const [past, present] of m.bind) fetches[present] = feeds[past];
      results = await session.run(feeds, fetches);
    } else {
      results = await session.run(feeds);
    }
    const stepDir = path.join(outDir, `step${k + 1}`);
    fs.mkdirSync(stepDir, { recursive: true });
    const index = {};
    session.outputNames.forEach((name, i) => {
      const t = results[name];
      const file = `${i}.bin`;
      writeTensor(t, path.join(stepDir, file));
      index[name] = { type: t.type, dims: t.dims.map(Number), file };
    });
    fs.writeFileSync(path.join(stepDir, 'outputs.json'), JSON.stringify(index));
    previous = results;
  }
}

main().catch((e) => {
  process.stderr.write(`ort_diff.js: ${e && e.message ? e.message : e}\n`);
  process.exit(1);
});
