#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Where a training job's start-up goes: the steps of examples/pytorch/train.py
up to its first batch, timed one by one (monotonic clock), as JSON.

  T0=$(date +%s.%N) startup.py DATA [train.py's options]

interp: from T0 (taken by the launcher just before exec) to this script's first
line; import: torch + torchvision; scan: ImageFolder's walk of DATA; model: the
model and optimizer; first_batch: iter(DataLoader) and its first batch (worker
processes forked, each loads its first batch: the first dataset reads); and the
same for the second epoch (the workers are forked again: persistent_workers is
False, as in train.py); step_eN: the mean of the next 5 training steps.
"""
import time
_t_first = time.time()
_m_first = time.monotonic()
import os  # noqa: E402
import sys  # noqa: E402
import json  # noqa: E402


def main():
    t0 = float(os.environ.get("T0", _t_first))
    r = {"interp": _t_first - t0}
    m = time.monotonic()
    import argparse
    import torch
    import torchvision
    from torch.utils.data import DataLoader
    from torchvision import datasets, transforms
    r["import"] = time.monotonic() - m
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--arch", default="resnet18")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    m = time.monotonic()
    tf = transforms.Compose([
        transforms.RandomResizedCrop(args.size, scale=(0.5, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    ])
    train = datasets.ImageFolder(args.data, transform=tf)
    r["scan"] = time.monotonic() - m
    m = time.monotonic()
    model = getattr(torchvision.models, args.arch)(num_classes=len(train.classes))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    r["model"] = time.monotonic() - m
    loader = DataLoader(train, batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers,
                        generator=torch.Generator().manual_seed(args.seed))
    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in (1, 2):
        m = time.monotonic()
        it = iter(loader)
        x, y = next(it)
        r[f"first_batch_e{epoch}"] = time.monotonic() - m
        steps, ms = 0, time.monotonic()
        for x, y in it:
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()
            steps += 1
            if steps == 5:
                break
        r[f"step_e{epoch}"] = (time.monotonic() - ms) / max(steps, 1)
        del it
    r["total_to_first_read"] = r["interp"] + r["import"] + r["scan"] + r["model"]
    r["wall_since_t0"] = time.time() - t0
    json.dump({k: round(v, 4) for k, v in r.items()}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
