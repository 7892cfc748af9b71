"""The bundled model's graph with its vocabulary in one table: the same vectors for ~12 % less CPU.

The model was converted from TensorFlow with its embedding table split into 17 shards (token id mod 17),
each quantized with a scale of its own.  Every run looks each distinct token up in all 17 shards
(Compress, Gather, DequantizeLinear per shard) and stitches the rows back in order with a ScatterElements:
about 90 of the graph's 711 nodes, 7 % of its kernel time in the scatter alone, and onnxruntime's
optimizer keeps them all (RESULTS.md, 2026-12-06, the model's session).  Here the shards become one
table, row `id` = shard `id % 17`, row `id // 17`, with each row's scale and zero point beside it, and
the lookup is one Gather and the same dequantization arithmetic, `(q - zero) * scale`: the vectors are
bit-identical.  The rewritten graph is saved once in a cache folder (`LocalEmbedder` keys it by the model's
sha256, this rewrite's version and onnxruntime's).  It is built by running this file as a script in a
process of its own, `python use_graph.py MODEL TARGET`: that needs the `onnx` package (a second to import,
which the process that embeds never pays) and ~200 MB for a second (not added to that process's peak);
without `onnx` the bundled graph runs as before.  The script imports nothing of docqa.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

NO_ONNX = 3  # the script's exit status when the onnx package is missing
VERSION = 1  # another rewrite: another cache file
SHARDS = 17
_SHARD = "Func/StatefulPartitionedCall/input/_{}:0_{}"
_IDS = "StatefulPartitionedCall/EncoderDNN/EmbeddingLookup/EmbeddingLookupUnique/Unique__59_cast:0"


class GraphShapeError(ValueError):
    """The graph is not the one this rewrite knows (the caller then runs the bundled graph)."""


def one_table(model: Any) -> Any:
    """`model` (an onnx ModelProto of the bundled model) with its sharded lookup replaced, in place."""
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    scatter = [n for n in graph.node if n.op_type == "ScatterElements"]
    names = [_SHARD.format(k, part) for k in range(1, SHARDS + 1) for part in ("quantized", "scale", "zero_point")]
    if len(scatter) != 1 or any(name not in inits for name in names) or not any(_IDS in n.input for n in graph.node):
        raise GraphShapeError("not the sharded embedding lookup of USE-multilingual-v3")
    shards = [numpy_helper.to_array(inits[_SHARD.format(k, "quantized")]) for k in range(1, SHARDS + 1)]
    scale = [float(numpy_helper.to_array(inits[_SHARD.format(k, "scale")])) for k in range(1, SHARDS + 1)]
    zero = [float(numpy_helper.to_array(inits[_SHARD.format(k, "zero_point")])) for k in range(1, SHARDS + 1)]
    rows, width = shards[0].shape
    table = np.stack(shards, axis=1).reshape(rows * SHARDS, width)  # row id: shard id % 17, its row id // 17
    del shards
    graph.initializer.extend([
        numpy_helper.from_array(table, "docqa/table"),
        numpy_helper.from_array(np.tile(np.array(scale, np.float32), rows).reshape(-1, 1), "docqa/scale"),
        numpy_helper.from_array(np.tile(np.array(zero, np.float32), rows).reshape(-1, 1), "docqa/zero")])
    lookup = [helper.make_node("Gather", ["docqa/table", _IDS], ["docqa/q"], axis=0, name="docqa/gather"),
              helper.make_node("Gather", ["docqa/scale", _IDS], ["docqa/s"], axis=0, name="docqa/gather_scale"),
              helper.make_node("Gather", ["docqa/zero", _IDS], ["docqa/z"], axis=0, name="docqa/gather_zero"),
              helper.make_node("Cast", ["docqa/q"], ["docqa/qf"], to=TensorProto.FLOAT, name="docqa/cast"),
              helper.make_node("Sub", ["docqa/qf", "docqa/z"], ["docqa/centred"], name="docqa/centre"),
              helper.make_node("Mul", ["docqa/centred", "docqa/s"], [scatter[0].output[0]], name="docqa/scale")]
    at = list(graph.node).index(scatter[0])
    graph.node.remove(scatter[0])
    for offset, node in enumerate(lookup):
        graph.node.insert(at + offset, node)
    _prune(graph)
    return model


def _prune(graph: Any) -> None:
    """Drop the nodes and initializers nothing reads any more (the shards and their stitching)."""
    while True:
        used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
        dead = [n for n in graph.node if not any(o in used for o in n.output)]
        if not dead:
            break
        for node in dead:
            graph.node.remove(node)
    used = {i for n in graph.node for i in n.input}
    for init in [i for i in graph.initializer if i.name not in used]:
        graph.initializer.remove(init)


def main(source: str, target: str) -> int:
    try:
        import onnx
    except ImportError:
        return NO_ONNX
    onnx.save(one_table(onnx.load(source)), target)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
