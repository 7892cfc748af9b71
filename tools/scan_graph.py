#!/usr/bin/env python3
"""Write src/docqa/store/int8_scan.onnx, the one-node graph of the int8 dense scan (store/matrix.py).

    python tools/scan_graph.py          # rewrite the shipped file (tests/store/test_matrix.py checks it)

The graph is built once, here, with `onnx`, so a search never imports `onnx` (0.6-0.8 s) nor
serialises its index into a model: `MatMulInteger(q, W, 128)`, where `W` is a placeholder
initializer that `_Int8Scan` replaces by the index's int8 matrix (`SessionOptions.add_initializer`),
so onnxruntime still pre-packs it as a constant weight.
"""

from __future__ import annotations

from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "src" / "docqa" / "store" / "int8_scan.onnx"


def build() -> bytes:
    import numpy as np
    from onnx import TensorProto, checker, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["q", "W", "zero"], ["s"])], "int8_scan",
        [helper.make_tensor_value_info("q", TensorProto.UINT8, [1, "dims"])],
        [helper.make_tensor_value_info("s", TensorProto.INT32, [1, "rows"])],
        [numpy_helper.from_array(np.zeros((1, 1), dtype=np.int8), "W"),  # replaced at load: (dims, rows)
         numpy_helper.from_array(np.array(128, dtype=np.uint8), "zero")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="docqa")
    model.ir_version = 8
    checker.check_model(model)
    return model.SerializeToString()


if __name__ == "__main__":
    TARGET.write_bytes(build())
    print(f"wrote {TARGET} ({TARGET.stat().st_size} bytes)")
