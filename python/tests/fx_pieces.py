"""Shared by the host tests of the importer's folds (rotary, attention
bthd, the gated matmul): a model's Dynamo graph, and the kb program of
the partition's piece that holds a given op. Needs torch >= 2; the tests
that import it skip first where it is missing."""
import kb.backend as B
from kb.partition import bindings, import_piece, partition, piece_graph


def capture(model, *inputs):
    """The model's one Dynamo graph (eval mode, static shapes) and its
    example inputs."""
    (gm, ex), = B._capture(model.eval(), list(inputs), dynamic_dim0=False)
    return gm, ex


def piece_mlir(model, inputs, op):
    """(partition, piece, MLIR text) of the first piece whose ops include
    `op` (e.g. "attention", "rotary", "silu")."""
    gm, ex = capture(model, *inputs)
    part = partition(gm, ex)
    g = part.graph_module
    nodes = {n.name: n for n in g.graph.nodes}
    p = next(p for p in part.pieces if op in p.ops)
    pg, _ = piece_graph(g, [nodes[n] for n in p.nodes], [nodes[n] for n in p.outputs])
    imp, _ = import_piece(pg, bindings(g, ex))
    return part, p, imp.program.mlir()
