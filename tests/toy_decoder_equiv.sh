#!/bin/sh
# toy_decoder_equiv.sh: the two toy decoders of examples/models.c compute
# the same logits.  toy_decoder updates its K/V caches in place at
# `position` (CacheUpdate, evaluated here as a slice assignment into the
# very array that was passed in); toy_decoder_concat grows them with
# Concat.  Five steps are fed the same tokens; the logits must agree and
# the in-place outputs must be the input arrays themselves.  A numpy
# evaluator of the handful of operators the models use, independent of
# the project's runtime, so a wrong example shows up here and not as a
# puzzling runtime failure.  Skips (77) without Debian's python.
set -eu
: "${top_builddir:?}" "${PYTHON3:=/usr/bin/python3}"
[ -x "$PYTHON3" ] || exit 77
"$PYTHON3" -c 'import onnx, numpy' 2>/dev/null || exit 77
ex="$top_builddir/examples"
[ -f "$ex/toy_decoder.onnx" ] && [ -f "$ex/toy_decoder_concat.onnx" ] || {
    echo "examples not generated in $ex" >&2; exit 1; }
exec "$PYTHON3" - "$ex" <<'PY'
import sys, onnx, numpy as np
from onnx import numpy_helper, helper

def run(m, feeds):
    env = dict(feeds)
    for t in m.graph.initializer:
        env[t.name] = numpy_helper.to_array(t)
    for n in m.graph.node:
        a = {x.name: helper.get_attribute_value(x) for x in n.attribute}
        i = [env[x] for x in n.input]
        op = n.op_type
        if op == 'Gather': r = np.take(i[0], i[1], axis=a.get('axis', 0))
        elif op == 'MatMul': r = i[0] @ i[1]
        elif op == 'Reshape': r = i[0].reshape(i[1])
        elif op == 'Transpose': r = i[0].transpose(a['perm'])
        elif op == 'Mul': r = i[0] * i[1]
        elif op == 'Add': r = i[0] + i[1]
        elif op == 'Softmax':
            e = np.exp(i[0] - i[0].max(a.get('axis', -1), keepdims=True))
            r = e / e.sum(a.get('axis', -1), keepdims=True)
        elif op == 'Concat': r = np.concatenate(i, axis=a['axis'])
        elif op == 'CacheUpdate':
            r, p = i[0], int(i[2])
            ax = a.get('axis', -2) % r.ndim
            idx = [slice(None)] * r.ndim
            idx[ax] = slice(p, p + i[1].shape[ax])
            r[tuple(idx)] = i[1]
        else:
            raise SystemExit('unexpected operator ' + op)
        env[n.output[0]] = r.astype(np.float32) if r.dtype == np.float64 else r
    return env

d = sys.argv[1]
ma = onnx.load(d + '/toy_decoder.onnx')
mc = onnx.load(d + '/toy_decoder_concat.onnx')
shape = [x.dim_value for x in ma.graph.input[2].type.tensor_type.shape.dim]
# onnx 1.12 keeps the contract's fields as unknown fields: go by the
# example's names (key_cache_<l> is updated into key_cache_<l>_updated).
caches = {vi.name: np.zeros(shape, np.float32) for vi in ma.graph.input
          if '_cache_' in vi.name}
past = {vi.name: np.zeros((shape[0], shape[1], 0, shape[3]), np.float32)
        for vi in mc.graph.input if vi.name.startswith('past_')}
assert len(caches) == 4 and len(past) == 4, (caches.keys(), past.keys())
for t, tok in enumerate([3, 7, 1, 12, 5]):
    ea = run(ma, {'input_ids': np.array([[tok]]), 'position': np.array(t), **caches})
    ec = run(mc, {'input_ids': np.array([[tok]]), **past})
    for name in caches:
        assert ea[name + '_updated'] is caches[name], name + ' not in place'
    for name in past:
        past[name] = ec[name.replace('past_', 'present_')]
    diff = float(np.abs(ea['logits'] - ec['logits']).max())
    assert diff < 1e-5, 'step %d: logits differ by %g' % (t, diff)
    assert float(np.abs(ea['logits']).max()) > 1e-3, 'degenerate logits'
print('toy decoders agree over 5 steps')
PY
