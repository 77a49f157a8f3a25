/* elem.c: facts about ONNX element types (TensorProto.DataType), one
 * table, used by shapes, plans, kernels and reports alike, and the element
 * count of a TensorProto's dims (oac_tensor_numel), which the payload
 * readers and the external-data checks both need.
 *
 * Invariants: the table is const; counts and sizes are overflow-checked
 * (false, never a wrapped number). */
#include "oac_int.h"

static const struct {
    const char *name;
    unsigned bits;
} elems[] = {
    [0] = { "UNDEFINED", 0 },   [1] = { "FLOAT", 32 },
    [2] = { "UINT8", 8 },       [3] = { "INT8", 8 },
    [4] = { "UINT16", 16 },     [5] = { "INT16", 16 },
    [6] = { "INT32", 32 },      [7] = { "INT64", 64 },
    [8] = { "STRING", 0 },      [9] = { "BOOL", 8 },
    [10] = { "FLOAT16", 16 },   [11] = { "DOUBLE", 64 },
    [12] = { "UINT32", 32 },    [13] = { "UINT64", 64 },
    [14] = { "COMPLEX64", 64 }, [15] = { "COMPLEX128", 128 },
    [16] = { "BFLOAT16", 16 },  [17] = { "FLOAT8E4M3FN", 8 },
    [18] = { "FLOAT8E4M3FNUZ", 8 }, [19] = { "FLOAT8E5M2", 8 },
    [20] = { "FLOAT8E5M2FNUZ", 8 }, [21] = { "UINT4", 4 },
    [22] = { "INT4", 4 },       [23] = { "FLOAT4E2M1", 4 },
    [24] = { "FLOAT8E8M0", 8 }, [25] = { "UINT2", 2 },
    [26] = { "INT2", 2 },
};

#define N_ELEMS (sizeof elems / sizeof elems[0])

const char *oac_elem_name(int32_t t)
{
    return t > 0 && (size_t)t < N_ELEMS ? elems[t].name : NULL;
}

unsigned oac_elem_bits(int32_t t)
{
    return t > 0 && (size_t)t < N_ELEMS ? elems[t].bits : 0;
}

bool oac_elem_bytes(int32_t t, uint64_t n, uint64_t *out)
{
    unsigned bits = oac_elem_bits(t);
    uint64_t total;
    if (!bits || oac_mul_overflow_u64(n, bits, &total))
        return false;
    *out = total / 8 + (total % 8 != 0);
    return true;
}

bool oac_tensor_numel(const Onnx__TensorProto *t, uint64_t *out)
{
    uint64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || oac_mul_overflow_u64(n, (uint64_t)t->dims[i], &n))
            return false;
    }
    *out = n;
    return true;
}
