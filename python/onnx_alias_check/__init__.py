"""onnx_alias_check: check ONNX models from Python export scripts.

The library of onnx-alias-check, loaded with ctypes; no compiled
extension.  Two calls, each doing for one model what the command line
does with --format=json:

    import onnx_alias_check as oac
    report = oac.check(model)                 # dict: the JSON report
    if report["status"] != "ok":
        for d in report["diagnostics"]:
            print(d["severity"], d["code"], d["message"])
    data, report = oac.annotate(model)        # annotated model bytes, or None

`model` is a path (str or os.PathLike), the serialized model (bytes,
bytearray, memoryview) or any object with SerializeToString(), such as
an onnx.ModelProto built with onnx.helper: nothing is written to disk.

The shared library is the one `make install` installed (its libdir is
recorded in _paths.py at build time), else the one the dynamic loader
finds by its soname (LD_LIBRARY_PATH, ldconfig's cache: after `make
install DESTDIR=...`, say); the environment variable
ONNX_ALIAS_CHECK_LIBRARY, the path of a libonnx-alias-check.so, overrides
both (the package's tests point it to the build tree).

Errors: a usage error (a dims name the model does not declare, a
negative value, an inputs name that is no graph input) raises
ValueError, naming the argument (dims['x'], inputs['x']), out of memory MemoryError; a model
that is unreadable or wrong is no exception but the report's
diagnostics, with "status": "error".
"""

import ctypes
import json
import re
import os

__all__ = ["check", "annotate", "library_path", "LIBRARY_ENV"]

LIBRARY_ENV = "ONNX_ALIAS_CHECK_LIBRARY"

# oac_status (include/oac.h).
_OAC_OK, _OAC_ENOMEM, _OAC_EINVAL = 0, -1, -4


class _DimBinding(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_int64)]


class _InputFile(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("path", ctypes.c_char_p)]


class _CheckOpts(ctypes.Structure):
    _fields_ = [("dims", ctypes.POINTER(_DimBinding)), ("n_dims", ctypes.c_size_t),
                ("inputs", ctypes.POINTER(_InputFile)), ("n_inputs", ctypes.c_size_t),
                ("config", ctypes.c_char_p), ("n_run_dims", ctypes.c_size_t),
                ("config_beside", ctypes.c_bool)]


class _AnnotateOpts(ctypes.Structure):
    _fields_ = [("config", ctypes.c_char_p), ("ignore_config", ctypes.c_bool),
                ("capacity", ctypes.c_int64), ("partial", ctypes.c_bool)]


_lib = None


SONAME = "libonnx-alias-check.so.0"


def _library_paths():
    """What to load, in order: the environment's (only), else the
    recorded install's, then the soname (the loader's search)."""
    path = os.environ.get(LIBRARY_ENV)
    if path:
        return [path]
    try:
        from . import _paths
    except ImportError:  # the source tree: no install recorded
        return [SONAME]
    return [os.path.join(_paths.LIBDIR, _paths.LIBNAME or SONAME), _paths.LIBNAME or SONAME]


def library_path():
    """The shared library this module loads (or would load first)."""
    return _library_paths()[0]


def _open_library():
    tried = []
    for path in _library_paths():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise OSError("onnx-alias-check: cannot load its shared library: tried %s; set %s to "
                  "its path, or LD_LIBRARY_PATH to its folder" % ("; ".join(tried), LIBRARY_ENV))


def _py_words(msg):
    """A library message in this module's words: the command line's
    --dim NAME and --input NAME are dims['NAME'] and inputs['NAME']."""
    msg = re.sub(r"--dim ([^\s:=]+)(=[^\s:]*)?", lambda m: "dims[%r]" % m.group(1), msg)
    msg = re.sub(r"--input ([^\s:=]+)(=[^\s:]*)?", lambda m: "inputs[%r]" % m.group(1), msg)
    return msg.replace("--dim", "dims").replace("--input", "inputs")


def _load():
    global _lib
    if _lib is not None:
        return _lib
    lib = _open_library()
    vp, sz = ctypes.c_void_p, ctypes.c_size_t
    lib.oac_ctx_new.restype = vp
    lib.oac_ctx_new.argtypes = []
    lib.oac_ctx_free.restype = None
    lib.oac_ctx_free.argtypes = [vp]
    lib.oac_errmsg.restype = ctypes.c_char_p
    lib.oac_errmsg.argtypes = [vp]
    lib.oac_free.restype = None
    lib.oac_free.argtypes = [vp]
    lib.oac_check_json.restype = ctypes.c_int
    lib.oac_check_json.argtypes = [vp, ctypes.POINTER(vp), ctypes.c_char_p, vp, sz,
                                   ctypes.POINTER(_CheckOpts), ctypes.c_bool]
    lib.oac_annotate_json.restype = ctypes.c_int
    lib.oac_annotate_json.argtypes = [vp, ctypes.POINTER(vp), ctypes.POINTER(sz),
                                      ctypes.POINTER(vp), ctypes.c_char_p, vp, sz,
                                      ctypes.POINTER(_AnnotateOpts)]
    _lib = lib
    return lib


def _model_arg(model, name):
    """(name bytes or None, buffer bytes or None) for the C call."""
    if isinstance(model, (str, os.PathLike)):
        return os.fsencode(model), None
    if hasattr(model, "SerializeToString"):
        model = model.SerializeToString()
    if isinstance(model, (bytearray, memoryview)):
        model = bytes(model)
    if not isinstance(model, bytes):
        raise TypeError("model: a path, bytes or an object with SerializeToString(), not %s"
                        % type(model).__name__)
    return (os.fsencode(name) if name is not None else None), model


def _call(fn):
    """fn(lib, ctx) -> status, with a context; raises on a failure."""
    lib = _load()
    ctx = lib.oac_ctx_new()
    if not ctx:
        raise MemoryError("onnx-alias-check: out of memory")
    try:
        rc = fn(lib, ctx)
        if rc != _OAC_OK:
            msg = (lib.oac_errmsg(ctx) or b"").decode("utf-8", "replace")
            if rc == _OAC_EINVAL:
                raise ValueError(_py_words(msg))
            if rc == _OAC_ENOMEM:
                raise MemoryError(msg or "onnx-alias-check: out of memory")
            raise RuntimeError("onnx-alias-check: status %d: %s" % (rc, msg))
    finally:
        lib.oac_ctx_free(ctx)


def _take_text(lib, ptr):
    if not ptr.value:
        return None
    try:
        return json.loads(ctypes.string_at(ptr.value).decode("utf-8"))
    finally:
        lib.oac_free(ptr)


def check(model, dims=None, werror=False, inputs=None, name=None, config=None):
    """Check one model; return its report (the contract's JSON report, a dict).

    dims: {dim_param: value} (--dim); inputs: {graph input: TensorProto
    file} (--input); werror: warnings make "status" "error" (--werror);
    name: stands for the path in the report of an in-memory model;
    config: the genai_config.json the model is deployed with (--config),
    checked against it.
    """
    dims = dict(dims or {})
    inputs = dict(inputs or {})
    d = (_DimBinding * max(len(dims), 1))()
    for i, (k, v) in enumerate(dims.items()):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError("dims[%r]: an int, not %s" % (k, type(v).__name__))
        # As the command line's --dim: a positive 64-bit integer.
        if not 1 <= v < 2 ** 63:
            raise ValueError("dims[%r] = %d: a dimension is an integer from 1 to 2**63-1"
                             % (k, v))
        d[i].name, d[i].value = str(k).encode("utf-8"), v
    f = (_InputFile * max(len(inputs), 1))()
    for i, (k, v) in enumerate(inputs.items()):
        f[i].name, f[i].path = str(k).encode("utf-8"), os.fsencode(v)
    opts = _CheckOpts(d, len(dims), f, len(inputs),
                      os.fsencode(config) if config is not None else None)
    cname, buf = _model_arg(model, name)
    out = ctypes.c_void_p()
    result = {}

    def run(lib, ctx):
        rc = lib.oac_check_json(ctx, ctypes.byref(out), cname, buf,
                                len(buf) if buf is not None else 0,
                                ctypes.byref(opts), bool(werror))
        result["report"] = _take_text(lib, out)
        return rc

    _call(run)
    return result["report"]


def annotate(model, config=None, ignore_config=False, capacity=None, partial=False,
             name=None):
    """Annotate one decoder in memory, as `onnx-alias-check annotate` does.

    Return (data, report): data, the annotated model's bytes, when every
    past/present pair holds (or partial) and the annotated model checks
    without error, else None; report, annotate's JSON report (a dict:
    pairs, verdicts, refusals).  config: genai_config.json (default: the
    one beside the model's path or name); capacity: a static capacity
    instead of the symbol kv_capacity.  Nothing is written to disk.
    """
    # As the command line's --capacity: a positive 64-bit integer (None:
    # the symbol), never truncated into the C field.
    if capacity is not None:
        if isinstance(capacity, bool) or not isinstance(capacity, int):
            raise TypeError("capacity: an int, not %s" % type(capacity).__name__)
        if not 1 <= capacity < 2 ** 63:
            raise ValueError("capacity = %d: a capacity is an integer from 1 to 2**63-1"
                             % capacity)
    opts = _AnnotateOpts(os.fsencode(config) if config is not None else None,
                         bool(ignore_config), capacity or 0, bool(partial))
    cname, buf = _model_arg(model, name)
    out, out_len, rep = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
    result = {}

    def run(lib, ctx):
        rc = lib.oac_annotate_json(ctx, ctypes.byref(out), ctypes.byref(out_len),
                                   ctypes.byref(rep), cname, buf,
                                   len(buf) if buf is not None else 0, ctypes.byref(opts))
        result["report"] = _take_text(lib, rep)
        if out.value:
            try:
                result["data"] = ctypes.string_at(out.value, out_len.value)
            finally:
                lib.oac_free(out)
        return rc

    _call(run)
    return result.get("data"), result["report"]
