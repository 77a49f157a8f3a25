#!/usr/bin/python3
"""gpt2_shared.py: the shared-buffer form of a stock GPT-2 export.

    gpt2_shared.py STOCK.onnx OUT.onnx CAPACITY

Writes the copy ONNX Runtime GenAI's past_present_share_buffer export
would be: every com.microsoft Attention gets past_present_share_buffer = 1
and input 6, past_sequence_length (INT32 [1]) = the total length
(attention_mask's last dim) minus the new tokens (input_ids' last dim),
computed in the graph; each past_N and present_N is one buffer of
CAPACITY positions (axis 3).  Nothing is annotated (tests/gpt2_shared.sh
runs `annotate` on it).  Debian's python3 with onnx.
"""
import sys

import onnx
from onnx import TensorProto, helper


def main():
    src, dst, cap = sys.argv[1], sys.argv[2], int(sys.argv[3])
    m = onnx.load(src)
    g = m.graph
    one = helper.make_tensor("psl_axis1", TensorProto.INT64, [1], [1])
    g.initializer.append(one)
    nodes = [
        helper.make_node("Shape", ["attention_mask"], ["psl_mask_shape"], name="psl_mask_shape"),
        helper.make_node("Gather", ["psl_mask_shape", "psl_axis1"], ["psl_total"],
                         name="psl_total", axis=0),
        helper.make_node("Shape", ["input_ids"], ["psl_ids_shape"], name="psl_ids_shape"),
        helper.make_node("Gather", ["psl_ids_shape", "psl_axis1"], ["psl_new"],
                         name="psl_new", axis=0),
        helper.make_node("Sub", ["psl_total", "psl_new"], ["psl_i64"], name="psl_sub"),
        helper.make_node("Cast", ["psl_i64"], ["past_sequence_length"], name="psl_cast",
                         to=TensorProto.INT32),
    ]
    for n in g.node:
        if n.domain == "com.microsoft" and n.op_type == "Attention":
            while len(n.input) < 6:
                n.input.append("")
            del n.input[6:]
            n.input.append("past_sequence_length")
            n.attribute.append(helper.make_attribute("past_present_share_buffer", 1))
    old = list(g.node)
    del g.node[:]
    g.node.extend(nodes + old)
    for vi in list(g.input) + list(g.output):
        if vi.name.startswith("past_") or vi.name.startswith("present_"):
            d = vi.type.tensor_type.shape.dim[3]
            d.Clear()
            d.dim_value = cap
    onnx.save(m, dst)


if __name__ == "__main__":
    main()
