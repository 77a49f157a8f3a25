#!/usr/bin/python3
"""ort_diff.py: onnx-alias-check's `run` against ONNX Runtime, step by step.

The Python half of tests/ort_diff.sh (which installs onnxruntime-node and
calls this; see there for the whole picture).  Debian's python3 with
onnx 1.12 and numpy.

    ort_diff.py --oac PROGRAM --node NODE --js tests/ort_diff.js --work DIR
                [--real DIR] [--examples DIR]

For each model it
  1. computes, from contract section 8's rules and independently of
     `run`, the inputs of every step of a generation loop: a prompt of P
     tokens at step 1, then one token a step; input_ids cycling through
     the tokens; attention_mask ones over the total (a static length:
     zeros after); position_ids the absolute positions; seqlens_k total-1;
     total_sequence_length and nonpad_kv_seqlen the total; write_indices
     the past length; a position input (a graph input wired to a
     CacheUpdate position or TensorScatter write_indices port, also inside
     bodies and through function calls) 0 then advancing by the update
     length; every other input a fixed value given to `run` with --input;
  2. runs ONNX Runtime (tests/ort_diff.js) for N steps on those inputs,
     each pair's present fed back as the next past (GenAI's non-shared
     mode: a stock past starts empty, a capacity-sized one zero);
  3. runs `onnx-alias-check run --steps k --dump DIR` for k = 1..N, which
     drives the same inputs itself;
  4. compares every graph output of step k: max |ours - ORT| must be at
     most TOL * max(max |ORT|, 1), TOL 1e-4 for FLOAT and DOUBLE, 2e-3 for
     FLOAT16 and BFLOAT16; integers and booleans exactly.  A present that
     is a capacity-sized shared buffer in our run and a grown present in
     ONNX Runtime's is compared on the prefix ONNX Runtime has (the
     positions written so far) along the one axis where they differ.

`run`'s per_step past_length must also be the loop's (0, P, P+1, ...).

Models: the real decoders of ../shared/real-models after `annotate`
(TensorScatter and GroupQueryAttention, 8 steps, prompt 3, batch 1 and
2; ONNX Runtime gets the original file, in which nothing is annotated,
and once the annotated file itself, whose contract fields are unknown
fields to it) and in their stock form; any other model in that folder
when `run` can execute it; every build-tree example, 4 steps.  An example with the contract's
CacheUpdate is given to ONNX Runtime rewritten: each
`CacheUpdate(cache, values, position)` (axis a) becomes
    Concat(Slice(cache, 0, p, a), values, Slice(cache, p + n, end, a), a)
with p = position as a 1-element tensor and n = values' length on axis a,
in the main graph, in If/Loop bodies and in local functions; that is
CacheUpdate's definition (contract section 2) wherever p + n is within
the capacity, which `run` enforces.  A model that cannot be compared is
listed as "not comparable: REASON" (a PagedCacheUpdate cache, a model the
check refuses, a model `run` has no kernel for), never dropped.

Prints one line per model and "ort_diff: N compared, N not comparable,
N failed"; exits 0 only when every comparable model matches.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NODE_TIMEOUT = 300     # seconds for one model's ONNX Runtime run
OAC_TIMEOUT = 120      # seconds for one `onnx-alias-check` call

TOKENS = [7, 3, 11, 5, 2]          # --tokens: shorter than a run, so it cycles

# ONNX element type -> (numpy dtype, ONNX Runtime JavaScript type, tolerance)
# tolerance None: compared exactly.
ELEM = {
    TensorProto.FLOAT: (np.float32, "float32", 1e-4),
    TensorProto.DOUBLE: (np.float64, "float64", 1e-4),
    TensorProto.FLOAT16: (np.float16, "float16", 2e-3),
    TensorProto.BFLOAT16: (None, "bfloat16", 2e-3),
    TensorProto.INT8: (np.int8, "int8", None),
    TensorProto.UINT8: (np.uint8, "uint8", None),
    TensorProto.INT16: (np.int16, "int16", None),
    TensorProto.UINT16: (np.uint16, "uint16", None),
    TensorProto.INT32: (np.int32, "int32", None),
    TensorProto.UINT32: (np.uint32, "uint32", None),
    TensorProto.INT64: (np.int64, "int64", None),
    TensorProto.UINT64: (np.uint64, "uint64", None),
    TensorProto.BOOL: (np.bool_, "bool", None),
}
JS_TO_ELEM = {v[1]: k for k, v in ELEM.items()}

# GenAI's decoder inputs (contract section 8): config key = default name.
DECODER_KEYS = ["input_ids", "attention_mask", "position_ids", "seqlens_k",
                "total_sequence_length", "write_indices", "nonpad_kv_seqlen"]


class NotComparable(Exception):
    """The model cannot be compared; the message says why."""


class Mismatch(Exception):
    """The comparison failed; the message says where."""


# ---- the contract's fields, read from the unknown fields onnx 1.12 keeps --

def _varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def contract_fields(msg):
    """{field number: last value} of a message's top-level fields (varints
    as ints, length-delimited as bytes): ValueInfoProto.access (1001) and
    alias_of (1002), which onnx 1.12 keeps as unknown fields."""
    buf = msg.SerializeToString()
    out, i = {}, 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            val, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            val, i = buf[i:i + n], i + n
        elif wire == 1:
            val, i = buf[i:i + 8], i + 8
        elif wire == 5:
            val, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("unexpected wire type %d" % wire)
        out[field] = val
    return out


def alias_of(vi):
    v = contract_fields(vi).get(1002)
    return v.decode() if v else None


def read_write(vi):
    return contract_fields(vi).get(1001) == 1


# ---- the model's inputs, outputs, pairs -----------------------------------

def tensor_type(vi):
    if not vi.type.HasField("tensor_type"):
        return None, None
    tt = vi.type.tensor_type
    dims = [d.dim_param if d.dim_param else (d.dim_value if d.HasField("dim_value") else None)
            for d in tt.shape.dim]
    return tt.elem_type, dims


def load_config(model_path):
    """The genai_config.json beside a model (NAME.genai_config.json, else
    genai_config.json in its folder), as `run` and `annotate` find it."""
    base = model_path[:-5] if model_path.endswith(".onnx") else model_path
    for p in (base + ".genai_config.json",
              os.path.join(os.path.dirname(model_path), "genai_config.json")):
        if os.path.isfile(p):
            with open(p) as f:
                return json.load(f)
    return None


def decoder_names(cfg):
    """Graph input name -> decoder role (section 8): the config's names,
    else the defaults."""
    given = ((cfg or {}).get("model", {}).get("decoder", {}).get("inputs", {}))
    return {given.get(k, k): k for k in DECODER_KEYS}


def pairs_of(model, cfg):
    """(past, present) pairs, as a runtime feeding presents back pairs
    them: an output's alias_of naming a graph input; else, for a past that
    is no READ_WRITE input, the config's templates or the name patterns of
    contract section 7."""
    g = model.graph
    inputs = {i.name: i for i in g.input}
    outputs = [o.name for o in g.output]
    pairs = []
    for o in g.output:
        a = alias_of(o)
        if a and a in inputs:
            pairs.append((a, o.name))
    paired = {p for p, _ in pairs}
    dec = (cfg or {}).get("model", {}).get("decoder", {})
    templ = []
    for kind in ("key", "value"):
        pin = dec.get("inputs", {}).get("past_%s_names" % kind)
        pout = dec.get("outputs", {}).get("present_%s_names" % kind)
        if pin and pout:
            templ.append((pin, pout))
    for name, vi in inputs.items():
        if name in paired or read_write(vi):
            continue
        present = None
        for pin, pout in templ:
            rx = "^" + re.escape(pin).replace("%d", r"(\d+)") + "$"
            m = re.match(rx, name)
            if m:
                present = pout.replace("%d", m.group(1))
        if present is None and not templ:
            m = re.match(r"^past_key_values\.(\d+)\.(.+)$", name)
            cand = ["present.%s.%s" % m.groups()] if m else []
            if "past" in name:
                cand.append(name.replace("past", "present"))
            present = next((c for c in cand if c in outputs), None)
        if present in outputs:
            pairs.append((name, present))
    return pairs


# ---- CacheUpdate for ONNX Runtime -------------------------------------------

def _const_i64(name, values):
    return helper.make_node("Constant", [], [name], name=name,
                            value=helper.make_tensor(name + "_v", TensorProto.INT64,
                                                     [len(values)], values))


def rewrite_cache_update(node, tag):
    """The ONNX nodes that compute CacheUpdate(cache, values, position)."""
    cache, values, position = node.input[0], node.input[1], node.input[2]
    axis = next((a.i for a in node.attribute if a.name == "axis"), -2)
    t = lambda s: "%s__%s" % (tag, s)
    return [
        _const_i64(t("one"), [1]),
        _const_i64(t("zero"), [0]),
        _const_i64(t("axes"), [axis]),
        _const_i64(t("end"), [2**63 - 1]),
        helper.make_node("Reshape", [position, t("one")], [t("p")], name=t("p")),
        helper.make_node("Shape", [values], [t("vshape")], name=t("vshape")),
        helper.make_node("Gather", [t("vshape"), t("axes")], [t("n")], name=t("n"), axis=0),
        helper.make_node("Add", [t("p"), t("n")], [t("pn")], name=t("pn")),
        helper.make_node("Slice", [cache, t("zero"), t("p"), t("axes")], [t("head")],
                         name=t("head")),
        helper.make_node("Slice", [cache, t("pn"), t("end"), t("axes")], [t("tail")],
                         name=t("tail")),
        helper.make_node("Concat", [t("head"), values, t("tail")], [node.output[0]],
                         name=t("concat"), axis=axis),
    ]


def rewrite_nodes(nodes, counter):
    """Rewrites CacheUpdate in a node list and in every body below it;
    returns how many it rewrote."""
    n = 0
    new = []
    for node in nodes:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                n += rewrite_nodes(a.g.node, counter)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    n += rewrite_nodes(sg.node, counter)
        if node.domain == "onnx_alias" and node.op_type == "CacheUpdate":
            counter[0] += 1
            new.extend(rewrite_cache_update(node, "cu%d" % counter[0]))
            n += 1
        else:
            new.append(node)
    del nodes[:]
    nodes.extend(new)
    return n


def uses_op(model, domain, op):
    def walk(nodes):
        for node in nodes:
            if node.domain == domain and node.op_type == op:
                return True
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH and walk(a.g.node):
                    return True
                if a.type == onnx.AttributeProto.GRAPHS and any(walk(s.node) for s in a.graphs):
                    return True
        return False
    return walk(model.graph.node) or any(walk(f.node) for f in model.functions)


def model_for_ort(src, dst):
    """src as ONNX Runtime can run it (CacheUpdate rewritten); returns how
    many nodes were rewritten (0: src copied unchanged)."""
    m = onnx.load(src)
    counter = [0]
    n = rewrite_nodes(m.graph.node, counter)
    for f in m.functions:
        n += rewrite_nodes(f.node, counter)
    if n == 0:
        shutil.copyfile(src, dst)
        return 0
    for holder in [m] + list(m.functions):
        keep = [o for o in holder.opset_import if o.domain != "onnx_alias"]
        del holder.opset_import[:]
        holder.opset_import.extend(keep)
    onnx.save(m, dst)
    return n


# ---- position inputs (contract section 5) ---------------------------------

POSITION_PORTS = {("onnx_alias", "CacheUpdate"): (2, 1, "axis", -2),
                  ("", "TensorScatter"): (2, 1, "axis", -2)}


def position_inputs(model, dims, driven):
    """Graph input -> update length, for graph inputs wired directly to a
    CacheUpdate position or TensorScatter write_indices port (in bodies
    and through local function calls too)."""
    g = model.graph
    inputs = {i.name: i for i in g.input}
    funcs = {(f.domain, f.name): f for f in model.functions}
    found = {}

    # Shapes of computed values (a decoder's new K/V rows), as ONNX's own
    # inference gives them; CacheUpdate itself is unknown to it.
    inferred = {}
    try:
        for vi in onnx.shape_inference.infer_shapes(model).graph.value_info:
            inferred[vi.name] = vi
    except Exception:           # inference is a help here, not a rule
        pass

    def values_dims(values, env):
        name = env.get(values, values)
        vi = inputs.get(name) or inferred.get(name)
        _, d = tensor_type(vi) if vi is not None else (None, None)
        if not d:
            raise NotComparable("the length of update values '%s' is unknown" % values)
        return d

    def walk(nodes, env, depth=0):
        for node in nodes:
            key = (node.domain, node.op_type)
            if key in POSITION_PORTS and len(node.input) > 2:
                port, vport, attr, default = POSITION_PORTS[key]
                outer = env.get(node.input[port], node.input[port])
                if outer in inputs and outer not in driven:
                    axis = next((a.i for a in node.attribute if a.name == attr), default)
                    n = resolve(values_dims(node.input[vport], env)[axis], dims)
                    found[outer] = n
            if key in funcs and depth < 16:
                f = funcs[key]
                fenv = {formal: env.get(actual, actual)
                        for formal, actual in zip(f.input, node.input)}
                walk(f.node, fenv, depth + 1)
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g.node, env, depth)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for sg in a.graphs:
                        walk(sg.node, env, depth)
    walk(g.node, {})
    return found


def resolve(d, dims):
    if isinstance(d, int):
        return d
    if d in dims:
        return dims[d]
    return 1           # a symbol no rule binds: one (a batch of one)


# ---- one step's inputs ------------------------------------------------------

def decoder_value(role, elem, dims_decl, past, new, tokens, dims):
    """A driven decoder input at one step (contract section 8)."""
    total = past + new
    dt = ELEM[elem][0]
    shape = [resolve(d, dims) for d in dims_decl]
    if role in ("input_ids", "position_ids", "attention_mask"):
        last = total if role == "attention_mask" else new
        if dims_decl and not isinstance(dims_decl[-1], int):
            shape[-1] = last
        if role == "input_ids":
            row = [tokens[(past + j) % len(tokens)] for j in range(new)]
        elif role == "position_ids":
            row = [past + j for j in range(new)]
        else:
            row = [1 if j < total else 0 for j in range(shape[-1])]
        if len(row) != shape[-1]:
            raise NotComparable("%s: a static axis of %d cannot hold %d" %
                                (role, shape[-1], len(row)))
        return np.broadcast_to(np.array(row, dtype=dt), shape).copy()
    value = {"seqlens_k": total - 1, "total_sequence_length": total,
             "write_indices": past, "nonpad_kv_seqlen": total}[role]
    return np.full(shape, value, dtype=dt)


def fixed_value(name, elem, shape, rng):
    dt = ELEM[elem][0]
    if dt is None:
        raise NotComparable("input '%s': element type %s" %
                            (name, TensorProto.DataType.Name(elem)))
    if elem == TensorProto.BOOL:
        return np.ones(shape, dtype=dt)
    if np.issubdtype(dt, np.integer):
        return np.full(shape, 2, dtype=dt)
    return rng.uniform(-1.0, 1.0, size=shape).astype(dt)


# ---- the tool ---------------------------------------------------------------

def oac(args, opts):
    try:
        p = subprocess.run([opts.oac] + args, capture_output=True, text=True,
                           timeout=OAC_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Mismatch("onnx-alias-check %s: no answer in %d s" % (args[0], OAC_TIMEOUT))
    return p


def encode_name(name):
    """--dump's file name of a value (man page, --dump)."""
    out = []
    for i, b in enumerate(name.encode()):
        c = chr(b)
        if (c.isascii() and c.isalnum()) or c in "_-" or (c == "." and i > 0):
            out.append(c)
        else:
            out.append("%%%02X" % b)
    return "".join(out) + ".pb"


def read_dump(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type == TensorProto.BFLOAT16:
        raw = np.frombuffer(t.raw_data, dtype=np.uint16) if t.raw_data else \
            np.array(t.int32_data, dtype=np.uint32).astype(np.uint16)
        arr = (raw.astype(np.uint32) << 16).view(np.float32).reshape(list(t.dims))
        return arr, t.data_type
    return numpy_helper.to_array(t), t.data_type


def read_ort(step_dir, name):
    with open(os.path.join(step_dir, "outputs.json")) as f:
        index = json.load(f)
    if name not in index:
        raise Mismatch("ONNX Runtime returned no output '%s'" % name)
    spec = index[name]
    elem = JS_TO_ELEM[spec["type"]]
    raw = open(os.path.join(step_dir, spec["file"]), "rb").read()
    if elem == TensorProto.BFLOAT16:
        arr = (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
    else:
        arr = np.frombuffer(raw, dtype=ELEM[elem][0])
    return arr.reshape(spec["dims"]), elem


def compare(name, ours, ours_elem, ref, ref_elem, is_present, step):
    """Max error of one output, relative to its scale; raises Mismatch."""
    if ours_elem != ref_elem:
        raise Mismatch("step %d '%s': element type %s here, %s in ONNX Runtime" %
                       (step, name, TensorProto.DataType.Name(ours_elem),
                        TensorProto.DataType.Name(ref_elem)))
    if ours.shape != ref.shape:
        diff = [i for i, (a, b) in enumerate(zip(ours.shape, ref.shape)) if a != b]
        if not (is_present and ours.ndim == ref.ndim and len(diff) == 1
                and ours.shape[diff[0]] > ref.shape[diff[0]]):
            raise Mismatch("step %d '%s': shape %s here, %s in ONNX Runtime" %
                           (step, name, list(ours.shape), list(ref.shape)))
        idx = [slice(None)] * ours.ndim
        idx[diff[0]] = slice(0, ref.shape[diff[0]])   # the valid prefix
        ours = ours[tuple(idx)]
    tol = ELEM[ref_elem][2]
    if tol is None:
        bad = int(np.count_nonzero(ours != ref))
        if bad:
            raise Mismatch("step %d '%s': %d of %d elements differ" % (step, name, bad, ref.size))
        return 0.0
    a = ours.astype(np.float64)
    b = ref.astype(np.float64)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if (nan_a != nan_b).any():
        raise Mismatch("step %d '%s': NaN in one and not the other" % (step, name))
    fin = ~nan_b
    if not fin.any():
        return 0.0
    if (np.isinf(a[fin]) != np.isinf(b[fin])).any() or \
            (a[fin][np.isinf(b[fin])] != b[fin][np.isinf(b[fin])]).any():
        raise Mismatch("step %d '%s': infinities differ" % (step, name))
    fin &= ~np.isinf(b)
    if not fin.any():
        return 0.0
    scale = max(float(np.max(np.abs(b[fin]))), 1.0)
    err = float(np.max(np.abs(a[fin] - b[fin]))) / scale
    if err > tol:
        raise Mismatch("step %d '%s': max abs error %.3g of scale %.3g (%.3g > %g)" %
                       (step, name, err * scale, scale, err, tol))
    return err


# ---- one model ----------------------------------------------------------------

def compare_model(case, opts):
    """Runs one case; returns a summary string or raises."""
    name, ours_path, ort_src = case["name"], case["model"], case["ort_model"]
    steps, prompt, dims = case["steps"], case["prompt"], dict(case["dims"])
    work = os.path.join(opts.work, re.sub(r"[^A-Za-z0-9_.-]", "_", name))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # The check first: a model it refuses is not run by `run`.
    p = oac(["check", "--format=json"] + sum((["--dim", "%s=%d" % kv] for kv in
                                               case.get("check_dims", {}).items()), []) +
            [ours_path], opts)
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        raise Mismatch("check: no JSON report (exit %d): %s" % (p.returncode, p.stderr.strip()))
    if rep.get("status") == "error":
        codes = ", ".join(sorted({d["code"] for d in rep["diagnostics"]
                                  if d["severity"] == "error"}))
        if case.get("example"):     # the examples' broken twins are broken on purpose
            raise NotComparable("deliberately broken: the check reports %s" % codes)
        if case.get("optional"):
            raise NotComparable("the check reports %s" % codes)
        raise Mismatch("the check reports %s" % codes)

    why = not_on_ort(name) if case.get("example") else None
    if why:
        raise NotComparable(why)
    ours = onnx.load(ours_path)
    if uses_op(ours, "onnx_alias", "PagedCacheUpdate"):
        raise NotComparable("PagedCacheUpdate: a Sequence<QuantizedTensor> cache of "
                            "quantized pages has no ONNX form ONNX Runtime runs")
    ort_model = os.path.join(work, "ort.onnx")
    rewritten = model_for_ort(ort_src, ort_model)
    ort = onnx.load(ort_model)

    cfg = load_config(ort_src)
    dec = decoder_names(load_config(ours_path))
    ort_dec = decoder_names(cfg)
    ort_pairs = pairs_of(ort, cfg)
    our_pairs = pairs_of(ours, load_config(ours_path))
    our_presents = {pr for _, pr in our_pairs}
    # Position inputs as the model we run wires them (ONNX Runtime's copy
    # has CacheUpdate rewritten); a driven write_indices is none.
    positions = {n: v for n, v in position_inputs(ours, dims, dec).items() if n not in dec}

    # Our run's --input files: every input that is no decoder input, no
    # position input, no cache (a pair's past or a READ_WRITE input).
    rng = np.random.default_rng(20240611)
    fixed = {}
    our_inputs = {i.name for i in ours.graph.input}
    ort_past = {p for p, _ in ort_pairs}
    for vi in ort.graph.input:
        if vi.name in ort_dec or vi.name in positions or vi.name in ort_past:
            continue
        if vi.name in {p for p, _ in our_pairs}:
            continue
        elem, d = tensor_type(vi)
        if elem is None:
            raise NotComparable("input '%s' is not a tensor" % vi.name)
        if read_write(vi):
            continue            # bound once, zero, never fed back: zeros
        if vi.name not in our_inputs:
            raise Mismatch("input '%s' of ONNX Runtime's model is not ours" % vi.name)
        fixed[vi.name] = fixed_value(vi.name, elem, [resolve(x, dims) for x in d], rng)
    input_args = []
    for n, arr in fixed.items():
        f = os.path.join(work, "in_%d.pb" % (len(input_args) // 2))
        with open(f, "wb") as fh:
            fh.write(numpy_helper.from_array(arr, n).SerializeToString())
        input_args += ["--input", "%s=%s" % (n, f)]

    # ONNX Runtime's steps.
    manifest = {"model": "ort.onnx", "out": "ort", "pairs": ort_pairs, "steps": [],
                "bind": ort_pairs if case.get("example") and bound_shared(name) else []}
    files = 0

    def feed(arr, elem):
        nonlocal files
        f = "f%d.bin" % files
        files += 1
        arr = np.ascontiguousarray(arr)
        with open(os.path.join(work, f), "wb") as fh:
            fh.write(arr.tobytes())
        return {"type": ELEM[elem][1], "dims": list(arr.shape), "file": f}

    past = 0
    for k in range(1, steps + 1):
        new = prompt if k == 1 else 1
        feeds = {}
        for vi in ort.graph.input:
            elem, d = tensor_type(vi)
            if vi.name in ort_dec:
                arr = decoder_value(ort_dec[vi.name], elem, d, past, new, TOKENS, dims)
            elif vi.name in positions:
                arr = np.full([resolve(x, dims) for x in d], (k - 1) * positions[vi.name],
                              dtype=ELEM[elem][0])
            elif vi.name in ort_past:
                if k > 1:
                    continue        # ONNX Runtime's present of step k-1
                shape = initial_past_shape(ort, vi, ort_pairs, dims)
                arr = np.zeros(shape, dtype=ELEM[elem][0])
            elif vi.name in fixed:
                arr = fixed[vi.name]
            else:                   # a READ_WRITE input nothing feeds back
                arr = np.zeros([resolve(x, dims) for x in d], dtype=ELEM[elem][0])
            feeds[vi.name] = feed(arr, elem)
        manifest["steps"].append({"feeds": feeds})
        past += new
    with open(os.path.join(work, "manifest.json"), "w") as fh:
        json.dump(manifest, fh)
    env = dict(os.environ, NODE_PATH=opts.node_path)
    try:
        p = subprocess.run([opts.node, opts.js, os.path.join(work, "manifest.json")],
                           capture_output=True, text=True, timeout=NODE_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        raise Mismatch("ONNX Runtime: no answer in %d s" % NODE_TIMEOUT)
    if p.returncode != 0:
        lines = [ln for ln in re.sub(r"\x1b\[[0-9;]*m", "", p.stderr).splitlines() if ln.strip()]
        said = [ln for ln in lines if ln.startswith("ort_diff.js:")] or lines[-1:]
        raise Mismatch("ONNX Runtime failed (exit %d): %s" %
                       (p.returncode, said[-1][:600] if said else "no message"))

    # Ours, k = 1..N, and the comparison.
    run_args = ["run", "--format=json"]
    if any(dec.get(i.name) == "input_ids" for i in ours.graph.input):
        run_args += ["--tokens", ",".join(map(str, TOKENS))]
    if prompt != 1:
        run_args += ["--prompt-length", str(prompt)]
    for s, v in case.get("run_dims", {}).items():
        run_args += ["--dim", "%s=%d" % (s, v)]
    run_args += input_args
    worst = {}
    driven = any(i.name in dec for i in ours.graph.input)
    for k in range(1, steps + 1):
        dump = os.path.join(work, "dump%d" % k)
        p = oac(run_args + ["--steps", str(k), "--dump", dump, ours_path], opts)
        try:
            rep = json.loads(p.stdout)
        except ValueError:
            raise Mismatch("run --steps %d: no JSON report (exit %d): %s" %
                           (k, p.returncode, p.stderr.strip()))
        if p.returncode != 0 or rep["execution"]["steps_completed"] != k:
            unsupported = sorted({d.get("op_type") or "?" for d in rep["diagnostics"]
                                  if d["code"] == "unsupported-operator"})
            if unsupported and case.get("optional"):
                raise NotComparable("the reference runtime has no kernel for %s" %
                                    ", ".join(unsupported))
            msgs = "; ".join("%s [%s]" % (d["message"], d["code"]) for d in rep["diagnostics"]
                             if d["severity"] == "error")
            raise Mismatch("run --steps %d: exit %d: %s" % (k, p.returncode, msgs[:600]))
        # The loop's past length per step, as section 8 counts it.
        if driven:
            want = [0] + [prompt + i for i in range(k - 1)]
            got = [st.get("past_length") for st in rep["execution"]["per_step"]]
            if got != want:
                raise Mismatch("run --steps %d: past_length %s, the loop's is %s" % (k, got, want))
        step_dir = os.path.join(work, "ort", "step%d" % k)
        for o in ours.graph.output:
            f = os.path.join(dump, encode_name(o.name))
            if not os.path.isfile(f):
                raise Mismatch("step %d: --dump wrote no %s" % (k, encode_name(o.name)))
            a, ae = read_dump(f)
            b, be = read_ort(step_dir, o.name)
            err = compare(o.name, a, ae, b, be, o.name in our_presents, k)
            worst[o.name] = max(worst.get(o.name, 0.0), err)
    if not opts.keep:
        shutil.rmtree(work, ignore_errors=True)
    how = " (CacheUpdate rewritten: %d node%s)" % (rewritten, "s" if rewritten > 1 else "") \
        if rewritten else ""
    return "%d steps, %d outputs, largest error %.2g (relative to scale)%s" % (
        steps, len(worst), max(worst.values()) if worst else 0.0, how)


def initial_past_shape(model, vi, pairs, dims):
    """A past's shape at step 1: its axis whose symbol the present does not
    share is the past length, 0; the rest as declared."""
    present = dict(pairs)[vi.name]
    pvi = next(o for o in model.graph.output if o.name == present)
    _, d = tensor_type(vi)
    _, pd = tensor_type(pvi)
    shape = []
    for i, x in enumerate(d):
        if isinstance(x, str) and pd and i < len(pd) and pd[i] != x and x not in dims:
            shape.append(0)
        else:
            shape.append(resolve(x, dims))
    return shape


# ---- the cases ----------------------------------------------------------------

# The real decoders `annotate` must make comparable: name -> the
# annotate options their annotated form needs (the GQA export's past has
# no capacity, and its config's max_length would give 128: 16 keeps the
# run small) and the name of its batch dim.
REAL_ANNOTATED = {"static-scatter-decoder": ([], "batch"),
                  "tiny-qwen35-gqa-decoder": (["--capacity", "16"], "batch_size")}


def real_cases(real, opts):
    """Each annotated decoder at batch 1 and 2 and in its stock form; any
    other model of the folder in its stock form when `run` can execute it."""
    cases = []
    if not real:
        return cases
    adir = os.path.join(opts.work, "annotated")
    os.makedirs(adir, exist_ok=True)
    for f in sorted(glob.glob(os.path.join(real, "*.onnx"))):
        base = os.path.basename(f)[:-5]
        if base in REAL_ANNOTATED:
            annotate_opts, batch = REAL_ANNOTATED[base]
            dims = {}
            out = os.path.join(adir, base + ".onnx")
            p = oac(["annotate"] + annotate_opts + ["-o", out, f], opts)
            if p.returncode != 0:
                cases.append({"name": base + " (annotated)",
                              "error": "annotate failed (exit %d): %s" %
                              (p.returncode, (p.stdout + p.stderr).strip()[-400:])})
            else:
                cfg = f[:-5] + ".genai_config.json"
                if os.path.isfile(cfg):
                    shutil.copyfile(cfg, out[:-5] + ".genai_config.json")
                # ONNX Runtime gets the original file; once also the
                # annotated one (the contract's fields are unknown to it).
                for b, ort_file in ((1, f), (2, f), (1, out)):
                    d = dict(dims, **({batch: b} if b > 1 else {}))
                    label = "annotated%s%s" % (", batch %d" % b if b > 1 else "",
                                               "; ONNX Runtime given the annotated file"
                                               if ort_file == out else "")
                    cases.append({"name": "%s (%s)" % (base, label),
                                  "model": out, "ort_model": ort_file, "steps": 8, "prompt": 3,
                                  "dims": d, "run_dims": d, "check_dims": {}})
        cases.append({"name": base + " (stock)", "model": f, "ort_model": f,
                      "steps": 8, "prompt": 3, "dims": {}, "run_dims": {},
                      "optional": base not in REAL_ANNOTATED})
    return cases


# Operator-form models (examples/op_models.c, op-models/ in the build
# tree) ONNX Runtime 1.30's CPU build cannot run as the contract defines
# them: each is tested against the documented semantics in
# tests/check_kernel_ops.c instead (the shared-buffer forms: equal to the
# growing form, which is compared here).
SHARED_WHY = ("ONNX Runtime 1.30's CPU kernel, given a present bound to the past as GenAI's "
              "shared mode binds it, corrupts memory (the process aborts); unbound, it writes "
              "the new rows shifted by a head")
NOT_ON_ORT_CPU = {
    "ms_attention_shared": "ONNX Runtime 1.30's CPU Attention does not read "
                           "past_sequence_length (input 6) and so refuses "
                           "past_present_share_buffer (\"past_sequence_length tensor must be "
                           "of one element\")",
    "mha_shared": SHARED_WHY,
    "dmmha_shared": SHARED_WHY,
    "paged_attention": "ONNX Runtime 1.30 registers PagedAttention for CUDA only (FLOAT16 "
                       "and BFLOAT16) and its schema wants 4-D block caches; the contract's "
                       "pools are [num_blocks, block_size, kv_heads * head_size]",
}

# Shared-buffer op models ONNX Runtime runs with each present bound to its
# past's tensor (ort_diff.js "bind"), as GenAI's shared mode binds them.
BIND_SHARED = {"sparse_attention"}


def bound_shared(name):
    return (name[:-4] if name.endswith("_f16") else name) in BIND_SHARED


def not_on_ort(name):
    base = name[:-4] if name.endswith("_f16") else name
    return NOT_ON_ORT_CPU.get(base)


EXAMPLE_DIMS = {"batch": 1, "heads": 2, "max_length": 8, "new_length": 2, "head_size": 4}
# Examples compared over more steps than the default 4: the paged decoder's
# dense twin over its sibling's first page (16 positions; the report keeps
# the past lengths of 16 steps, which the comparison reads).
EXAMPLE_STEPS = {"paged_decoder_dense": 16}


def example_cases(folder):
    cases = []
    for f in sorted(glob.glob(os.path.join(folder, "*.onnx"))):
        m = onnx.load(f)
        syms = set()
        for vi in list(m.graph.input) + list(m.graph.output):
            _, d = tensor_type(vi)
            syms |= {x for x in (d or []) if isinstance(x, str)}
        dims = {s: v for s, v in EXAMPLE_DIMS.items() if s in syms}
        cases.append({"name": os.path.basename(f)[:-5], "model": f, "ort_model": f,
                      "steps": EXAMPLE_STEPS.get(os.path.basename(f)[:-5], 4),
                      "prompt": 1, "dims": dims, "run_dims": dims,
                      "check_dims": dims, "example": True})
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oac", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--node-path", required=True, help="the node_modules folder")
    ap.add_argument("--js", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--real")
    ap.add_argument("--examples", action="append", default=[],
                    help="a folder of models (repeatable)")
    ap.add_argument("--keep", action="store_true", help="keep each model's work folder")
    ap.add_argument("--only", help="run only the cases whose name contains this")
    opts = ap.parse_args()
    os.makedirs(opts.work, exist_ok=True)
    compared = skipped = failed = 0
    cases = []
    try:
        cases += real_cases(opts.real, opts)
    except Mismatch as e:
        cases.append({"name": "real models", "error": str(e)})
    for folder in opts.examples:
        cases += example_cases(folder)
    if not cases:
        print("ort_diff: no model to compare")
        return 1
    for case in cases:
        if opts.only and opts.only not in case["name"]:
            continue
        label = "ort_diff: %s:" % case["name"]
        if "error" in case:
            print(label, "FAIL:", case["error"])
            failed += 1
            continue
        try:
            print(label, "ok:", compare_model(case, opts))
            compared += 1
        except NotComparable as e:
            print(label, "not comparable:", e)
            skipped += 1
        except Mismatch as e:
            print(label, "FAIL:", e)
            failed += 1
        sys.stdout.flush()
    print("ort_diff: %d compared, %d not comparable, %d failed" % (compared, skipped, failed))
    return 0 if failed == 0 and compared > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
