// bench_decode_ort.js: ONNX Runtime's half of bench/bench_decode (see there).
//
//   node bench_decode_ort.js MODEL CAPACITY DECODE_STEPS LAYERS KV_HEADS HEAD VOCAB
//
// Runs the decoder bench_decode wrote (GroupQueryAttention over static
// caches [1, KV_HEADS, CAPACITY, HEAD], FLOAT16) with onnxruntime-node on
// one thread (intra- and inter-op), present bound to past: each layer's
// past tensor is also given as the pre-allocated present output, so ONNX
// Runtime's kernel updates the one buffer in place (its shared-buffer
// mode), as the annotated model runs in onnx-alias-check.  Step 1 feeds a
// prompt of one token, steps 2 .. 1 + DECODE_STEPS one token each (the
// same input_ids, seqlens_k and total_sequence_length onnx-alias-check's
// run drives).  Prints one line: the median CPU time (process.cpuUsage,
// user + system, ns) of the decode steps, then the logits' checksum of
// the last step.  Exit 0 when every step ran, 1 on a failure, 2 when
// onnxruntime-node cannot be loaded (NODE_PATH names its folder).
'use strict';

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  process.stderr.write(`bench_decode_ort.js: cannot load onnxruntime-node: ${e.message}\n`);
  process.exit(2);
}

async function main() {
  const [model, cap, steps, layers, kv, head, vocab] = process.argv.slice(2);
  const C = Number(cap), S = Number(steps), L = Number(layers), KV = Number(kv);
  const H = Number(head), V = Number(vocab);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {}, fetches = { logits: null };
  for (let l = 0; l < L; l++)
    for (const kind of ['key', 'value']) {
      const t = new ort.Tensor('float16', new Uint16Array(KV * C * H), [1, KV, C, H]);
      feeds[`past_key_values.${l}.${kind}`] = t;
      fetches[`present.${l}.${kind}`] = t;
    }
  const dt = [];
  let out = null;
  for (let step = 1; step <= 1 + S; step++) {
    feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from([BigInt((step * 7) % V)]), [1, 1]);
    feeds.seqlens_k = new ort.Tensor('int32', Int32Array.from([step - 1]), [1]);
    feeds.total_sequence_length = new ort.Tensor('int32', Int32Array.from([step]), []);
    const c0 = process.cpuUsage();
    out = await session.run(feeds, fetches);
    const c = process.cpuUsage(c0);
    if (step > 1)
      dt.push((c.user + c.system) * 1000);
  }
  // In place: the past itself holds the last step's row (position S).
  for (let l = 0; l < L; l++) {
    const past = feeds[`past_key_values.${l}.key`].data;
    let any = false;
    for (let h = 0; h < KV && !any; h++)
      for (let i = 0; i < H && !any; i++)
        any = past[(h * C + S) * H + i] !== 0;
    if (!any)
      throw new Error(`present.${l}.key was not written into its past`);
  }
  dt.sort((a, b) => a - b);
  const med = dt.length % 2 ? dt[(dt.length - 1) / 2]
                            : (dt[dt.length / 2 - 1] + dt[dt.length / 2]) / 2;
  let sum = 0;
  for (const v of out.logits.data)
    sum = (sum + v) % 1000003;
  process.stdout.write(`${med} ${sum}\n`);
}

main().catch((e) => {
  process.stderr.write(`bench_decode_ort.js: ${e.message}\n`);
  process.exit(1);
});
