#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""CPU cost of the two halves of examples/pytorch/train.py, as JSON.

  decode.py DATA [--arch A --size S --batch-size B] [--images N]

loader: what a DataLoader worker does per sample (open and read the file, PIL
decode, RandomResizedCrop + flip + ToTensor + Normalize, collate), run in this
process (num_workers=0) on warm files, without the model: CPU seconds
(process_time) per image and per dataset byte. train: one SGD step of the
model on random tensors of the same shape: CPU seconds per image. Warm means
the files are read once before timing (so this is CPU, not storage).
"""
import argparse
import json
import os
import sys
import time

import torch
import torchvision
from torch.utils.data import DataLoader, Subset
from torchvision import datasets, transforms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--arch", default="resnet18")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--images", type=int, default=512)
    args = ap.parse_args()
    torch.manual_seed(1)
    tf = transforms.Compose([
        transforms.RandomResizedCrop(args.size, scale=(0.5, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    ])
    full = datasets.ImageFolder(args.data, transform=tf)
    n = min(args.images, len(full))
    idx = torch.randperm(len(full), generator=torch.Generator().manual_seed(1))[:n].tolist()
    ds = Subset(full, idx)
    nbytes = sum(os.path.getsize(full.samples[i][0]) for i in idx)
    for i in idx:  # warm
        with open(full.samples[i][0], "rb") as f:
            f.read()
    loader = DataLoader(ds, batch_size=args.batch_size, num_workers=0)
    c0, w0 = time.process_time(), time.monotonic()
    for _ in loader:
        pass
    lc, lw = time.process_time() - c0, time.monotonic() - w0
    model = getattr(torchvision.models, args.arch)(num_classes=len(full.classes))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(args.batch_size, 3, args.size, args.size)
    y = torch.randint(0, len(full.classes), (args.batch_size,))
    steps = max(3, 256 // args.batch_size)
    for s in range(steps + 1):
        if s == 1:
            c0, w0 = time.process_time(), time.monotonic()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    tc, tw = time.process_time() - c0, time.monotonic() - w0
    img = steps * args.batch_size
    json.dump({"images": n, "bytes": nbytes, "bytes_per_image": nbytes / n,
               "loader_cpu_per_image": lc / n, "loader_wall_per_image": lw / n,
               "loader_cpu_per_mib": lc / nbytes * 1048576,
               "train_cpu_per_image": tc / img, "train_wall_per_image": tw / img,
               "threads": torch.get_num_threads()}, sys.stdout)
    print()


if __name__ == "__main__":
    sys.exit(main())
