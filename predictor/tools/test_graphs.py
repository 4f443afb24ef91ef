#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Small ONNX graphs for the importer's and the warnings' tests
(predictor/data/test/), made with torch.onnx.export as a user would:

  eval_folded.onnx   a CNN exported in eval mode (torch's default): BatchNorm
                     folded into the convolutions' weights and biases
  eval_bn.onnx       eval mode where BatchNorm cannot fold (after a Linear):
                     BatchNormalization with training_mode=0
  ood_tiny.onnx      a training-mode plain export at 64x64 with an Upsample
                     (Resize, an op the training set never has), a few
                     thousand parameters and FLOPs: outside the training
                     range on every count
  unresolved.onnx    a graph whose shape depends on data (NonZero): shapes
                     after it cannot be inferred

    /usr/bin/python3 predictor/tools/test_graphs.py predictor/data/test
"""
import io
import os
import sys
import warnings

warnings.filterwarnings("ignore")

import onnx  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from onnx import helper, TensorProto  # noqa: E402

TRAIN = torch.onnx.TrainingMode.TRAINING


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, 2, 1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.c2 = nn.Conv2d(4, 4, 3, 2, 1)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        x = self.c2(self.up(torch.relu(self.bn(self.c1(x)))))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def export(model, x, path, **kw):
    buf = io.BytesIO()
    torch.onnx.export(model, x, buf, export_params=False, **kw)
    onnx.save(onnx.load_from_string(buf.getvalue()), path)


def unresolved(path):
    """x -> NonZero(x) -> Transpose -> Reshape(x, shape of that): unknown."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3, 3, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("NonZero", ["c"], ["nz"]),
        helper.make_node("Shape", ["nz"], ["s"]),
        helper.make_node("Reshape", ["c", "s"], ["r"]),
        helper.make_node("Relu", ["r"], ["y"]),
    ]
    g = helper.make_graph(nodes, "unresolved", [x, w], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "predictor/data/test"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    m = Tiny()
    export(m, torch.randn(2, 3, 64, 64), os.path.join(out, "ood_tiny.onnx"), training=TRAIN)
    export(m, torch.randn(2, 3, 64, 64), os.path.join(out, "eval_folded.onnx"))
    mlp = nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.ReLU(), nn.BatchNorm1d(8),
                        nn.Linear(8, 2))
    export(mlp, torch.randn(2, 3, 2, 2), os.path.join(out, "eval_bn.onnx"))
    unresolved(os.path.join(out, "unresolved.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
