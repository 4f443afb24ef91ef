#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Train an image classifier on an ImageFolder dataset: a plain PyTorch
training script, as a user would write it (nothing here knows about Tandem).

  train.py DATA --arch resnet18 --size 64 --batch-size 32 --workers 2 --epochs 2
           [--shards | --records] [--checkpoint-dir DIR [--checkpoint-every K]]

With --shards, DATA is a folder of WebDataset-style tar shards (make_shards.py:
KEY.jpg and KEY.cls per sample, classes.txt) read the way WebDataset reads
them, with the standard library's tarfile: each epoch the shard order is
shuffled (seed + epoch), the shards are dealt to the DataLoader's workers, each
shard is read from its start to its end, and the samples pass a shuffle buffer
of --shuffle-buffer.

With --records, DATA is one file of fixed-size records (make_records.py), a
single large random-access file as HDF5 or LMDB datasets are: a map-style
dataset whose items each DataLoader worker reads with os.pread at the
record's offset, in the sampler's shuffled order (every record once per
epoch, a new order each epoch).

With --checkpoint-dir, every K steps the model and optimizer state go to
DIR/ckpt-NNNNNN.pt (NNNNNN: the step) the way users write checkpoints:
torch.save to a temporary name, then os.replace. Each prints a line
"checkpoint step N: PATH, BYTES bytes, stall S s" (S: the wall time of the
save and the rename, the time training waited for it).
"""
import argparse
import glob
import io
import json
import os
import random
import statistics
import struct
import sys
import tarfile
import time

import torch
import torchvision
from torch.utils.data import DataLoader
from PIL import Image
from torchvision import datasets, transforms


class Shards(torch.utils.data.IterableDataset):
    """WebDataset-style tar shards, read in a shuffled shard order per epoch."""

    def __init__(self, folder, transform, seed, buffer):
        self.paths = sorted(glob.glob(os.path.join(folder, "*.tar")))
        with open(os.path.join(folder, "classes.txt")) as f:
            self.classes = f.read().split()
        if not self.paths or not self.classes:
            raise SystemExit(f"{folder}: no *.tar shards or no classes.txt (make_shards.py)")
        self.transform, self.seed, self.buffer, self.epoch = transform, seed, buffer, 0

    def samples(self, path):
        """(JPEG bytes, class) of each sample of one shard, in the shard's order."""
        jpg = None
        with tarfile.open(path, "r|") as tar:  # a stream: read from start to end
            for m in tar:
                key, _, ext = m.name.rpartition(".")
                data = tar.extractfile(m).read()
                if ext == "jpg":
                    jpg = (key, data)
                elif ext == "cls" and jpg and jpg[0] == key:
                    yield jpg[1], int(data)

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        wid, nw = (info.id, info.num_workers) if info else (0, 1)
        paths = list(self.paths)
        random.Random(self.seed * 1000 + self.epoch).shuffle(paths)
        rng = random.Random((self.seed * 1000 + self.epoch) * 64 + wid)
        buf = []
        for path in paths[wid::nw]:
            for sample in self.samples(path):
                buf.append(sample)
                if len(buf) >= self.buffer:
                    yield self.decode(buf.pop(rng.randrange(len(buf))))
        while buf:
            yield self.decode(buf.pop(rng.randrange(len(buf))))

    def decode(self, sample):
        img = Image.open(io.BytesIO(sample[0])).convert("RGB")
        return self.transform(img), sample[1]


class Records(torch.utils.data.Dataset):
    """One file of fixed-size records (make_records.py), read with pread."""

    def __init__(self, path, transform):
        with open(path, "rb") as f:
            head = f.read(4096)
        if not head.startswith(b"TANDEMREC1\n"):
            raise SystemExit(f"{path}: not a records file (make_records.py)")
        meta = json.loads(head.split(b"\n")[1])
        self.path, self.transform = path, transform
        self.size, self.count, self.classes = meta["record_size"], meta["count"], meta["classes"]
        self.fd, self.pid = None, None

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        if self.pid != os.getpid():  # each worker process opens its own
            self.fd, self.pid = os.open(self.path, os.O_RDONLY), os.getpid()
        rec = os.pread(self.fd, self.size, 4096 + i * self.size)
        cls, n = struct.unpack_from("<II", rec)
        img = Image.open(io.BytesIO(rec[8:8 + n])).convert("RGB")
        return self.transform(img), cls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="ImageFolder root (one subfolder per class), or with "
                    "--shards a folder of tar shards")
    ap.add_argument("--shards", action="store_true",
                    help="DATA holds WebDataset-style tar shards (make_shards.py)")
    ap.add_argument("--records", action="store_true",
                    help="DATA is one file of fixed-size records (make_records.py)")
    ap.add_argument("--shuffle-buffer", type=int, default=256, metavar="N",
                    help="with --shards: samples in each worker's shuffle buffer (default 256)")
    ap.add_argument("--arch", default="resnet18",
                    help="a torchvision.models constructor (resnet18, mobilenet_v3_small, ...)")
    ap.add_argument("--size", type=int, default=64, help="training resolution")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2, help="DataLoader num_workers")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--checkpoint-dir", help="write checkpoints here (default: none)")
    ap.add_argument("--checkpoint-every", type=int, default=100, metavar="K",
                    help="steps between checkpoints (default 100)")
    args = ap.parse_args()
    if args.checkpoint_every < 1:
        ap.error("--checkpoint-every must be at least 1")
    if args.shuffle_buffer < 1:
        ap.error("--shuffle-buffer must be at least 1")
    if args.shards and args.records:
        ap.error("--shards and --records exclude each other")

    torch.manual_seed(args.seed)
    tf = transforms.Compose([
        transforms.RandomResizedCrop(args.size, scale=(0.5, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    ])
    if args.shards:
        train = Shards(args.data, tf, args.seed, args.shuffle_buffer)
        loader = DataLoader(train, batch_size=args.batch_size, num_workers=args.workers)
        what = f"{len(train.paths)} shards"
    else:
        if args.records:
            train = Records(args.data, tf)
            what = f"{len(train)} records of {train.size} bytes"
        else:
            train = datasets.ImageFolder(args.data, transform=tf)
            what = f"{len(train)} images"
        loader = DataLoader(train, batch_size=args.batch_size, shuffle=True,
                            num_workers=args.workers,
                            generator=torch.Generator().manual_seed(args.seed))
    model = getattr(torchvision.models, args.arch)(num_classes=len(train.classes))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    print(f"{args.arch} at {args.size}px on {what}, {len(train.classes)} classes, "
          f"batch {args.batch_size}, {args.workers} workers, {torch.get_num_threads()} threads",
          flush=True)

    t_start = time.monotonic()
    step, stalls = 0, []
    model.train()
    for epoch in range(args.epochs):
        t0 = time.monotonic()
        seen, loss_sum, correct = 0, 0.0, 0
        if args.shards:
            train.epoch = epoch  # the workers get a copy of it at each epoch's start
        for x, y in loader:
            opt.zero_grad()
            out = model(x)
            loss = loss_fn(out, y)
            loss.backward()
            opt.step()
            seen += len(y)
            loss_sum += loss.item() * len(y)
            correct += (out.argmax(1) == y).sum().item()
            step += 1
            if args.checkpoint_dir and step % args.checkpoint_every == 0:
                stalls.append(checkpoint(args.checkpoint_dir, step, epoch, model, opt))
        dt = time.monotonic() - t0
        print(f"epoch {epoch + 1}/{args.epochs}: {dt:.2f} s, {seen} images "
              f"({seen / dt:.1f}/s), loss {loss_sum / seen:.3f}, accuracy {correct / seen:.3f}",
              flush=True)
    if stalls:
        print(f"checkpoints {len(stalls)}: stall median {statistics.median(stalls):.6f} s, "
              f"max {max(stalls):.6f} s, sum {sum(stalls):.6f} s", flush=True)
    print(f"total {time.monotonic() - t_start:.2f} s", flush=True)
    return 0


def checkpoint(folder, step, epoch, model, opt):
    """Save model and optimizer as users do (a temporary name, then
    os.replace, no fsync); print and return the stall in seconds."""
    path = os.path.join(folder, f"ckpt-{step:06d}.pt")
    tmp = os.path.join(folder, f".ckpt-{step:06d}.pt.tmp")
    t0 = time.monotonic()
    torch.save({"step": step, "epoch": epoch, "model": model.state_dict(),
                "optimizer": opt.state_dict()}, tmp)
    os.replace(tmp, path)
    stall = time.monotonic() - t0
    print(f"checkpoint step {step}: {path}, {os.path.getsize(path)} bytes, stall {stall:.6f} s",
          flush=True)
    return stall


if __name__ == "__main__":
    sys.exit(main())
