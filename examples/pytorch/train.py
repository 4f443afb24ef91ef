#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Train an image classifier on an ImageFolder dataset: a plain PyTorch
training script, as a user would write it (nothing here knows about Tandem).

  train.py DATA --arch resnet18 --size 64 --batch-size 32 --workers 2 --epochs 2
"""
import argparse
import sys
import time

import torch
import torchvision
from torch.utils.data import DataLoader
from torchvision import datasets, transforms


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="ImageFolder root (one subfolder per class)")
    ap.add_argument("--arch", default="resnet18",
                    help="a torchvision.models constructor (resnet18, mobilenet_v3_small, ...)")
    ap.add_argument("--size", type=int, default=64, help="training resolution")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2, help="DataLoader num_workers")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    tf = transforms.Compose([
        transforms.RandomResizedCrop(args.size, scale=(0.5, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    ])
    train = datasets.ImageFolder(args.data, transform=tf)
    loader = DataLoader(train, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers,
                        generator=torch.Generator().manual_seed(args.seed))
    model = getattr(torchvision.models, args.arch)(num_classes=len(train.classes))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    print(f"{args.arch} at {args.size}px on {len(train)} images, {len(train.classes)} classes, "
          f"batch {args.batch_size}, {args.workers} workers, {torch.get_num_threads()} threads",
          flush=True)

    t_start = time.monotonic()
    model.train()
    for epoch in range(args.epochs):
        t0 = time.monotonic()
        seen, loss_sum, correct = 0, 0.0, 0
        for x, y in loader:
            opt.zero_grad()
            out = model(x)
            loss = loss_fn(out, y)
            loss.backward()
            opt.step()
            seen += len(y)
            loss_sum += loss.item() * len(y)
            correct += (out.argmax(1) == y).sum().item()
        dt = time.monotonic() - t0
        print(f"epoch {epoch + 1}/{args.epochs}: {dt:.2f} s, {seen} images "
              f"({seen / dt:.1f}/s), loss {loss_sum / seen:.3f}, accuracy {correct / seen:.3f}",
              flush=True)
    print(f"total {time.monotonic() - t_start:.2f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
