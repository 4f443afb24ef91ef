#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Pack an ImageFolder dataset into WebDataset-style tar shards.

OUT/shard-NNNNNN.tar: plain (uncompressed) tar files written with the Python
standard library's tarfile, each holding whole samples in a shuffled order
(seeded): for every image KEY.jpg (the JPEG's bytes, unchanged) and KEY.cls
(its class index as text), one after the other, as WebDataset writes them. A
shard is closed when it would pass --shard-size. OUT/classes.txt lists the
class names in index order (the ImageFolder's sorted folder names). The
output is the same for the same arguments.

  make_shards.py SRC OUT --shard-size 64M [--seed 1]
"""
import argparse
import io
import os
import random
import sys
import tarfile

SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(s, example):
    """bytes of a size like 64M (K, M, G: binary); make_records.py uses it too"""
    mult = SUFFIX.get(s[-1:].upper(), 1)
    try:
        return int(float(s[:-1] if s[-1:].upper() in SUFFIX else s) * mult)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {s!r} (e.g. {example})")


def size_arg(s):
    v = parse_size(s, "64M")
    if v < 10240:
        raise argparse.ArgumentTypeError(f"--shard-size {s}: at least 10K")
    return v


def list_samples(ap, src, seed):
    """(classes, [(path, class index)] shuffled by seed) of an ImageFolder root"""
    classes = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    if not classes:
        ap.error(f"{src}: no class folders")
    samples = [(os.path.join(src, c, f), i) for i, c in enumerate(classes)
               for f in sorted(os.listdir(os.path.join(src, c)))]
    random.Random(seed).shuffle(samples)
    return classes, samples


def add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", help="ImageFolder root (one subfolder per class)")
    ap.add_argument("out", help="folder for the shards (created; must not hold shards)")
    ap.add_argument("--shard-size", type=size_arg, default=size_arg("64M"),
                    help="bytes per shard at most, unless one sample is larger (default 64M)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    classes, samples = list_samples(ap, args.src, args.seed)
    os.makedirs(args.out, exist_ok=True)
    if any(n.endswith(".tar") for n in os.listdir(args.out)):
        ap.error(f"{args.out}: already holds shards")
    with open(os.path.join(args.out, "classes.txt"), "w") as f:
        f.write("".join(c + "\n" for c in classes))

    shard, tar, used, n = 0, None, 0, 0
    for k, (path, cls) in enumerate(samples):
        with open(path, "rb") as f:
            jpg = f.read()
        label = str(cls).encode()
        need = 512 * 2 + -(-len(jpg) // 512) * 512 + 512  # two headers, padded data
        if tar is not None and used + need + 1024 > args.shard_size:
            tar.close()
            tar, shard = None, shard + 1
        if tar is None:
            tar = tarfile.open(os.path.join(args.out, f"shard-{shard:06d}.tar"), "w",
                               format=tarfile.USTAR_FORMAT)
            used = 0
        key = f"{k:08d}"
        add(tar, key + ".jpg", jpg)
        add(tar, key + ".cls", label)
        used += need
        n += 1
    if tar is not None:
        tar.close()
    print(f"{n} samples of {len(classes)} classes in {shard + 1} shards under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
