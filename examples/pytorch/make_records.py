#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Pack an ImageFolder dataset into one file of fixed-size records.

OUT is a single random-access file, as HDF5 or LMDB datasets are: a 4 KiB
header, then one record per image at offset 4096 + i * RECORD, each record
the image's class (uint32, little-endian), its JPEG's length (uint32) and
the JPEG's bytes unchanged, zero-padded to RECORD. RECORD is --record-size,
or by default the smallest multiple of 4 KiB that holds the largest image,
so records start on page boundaries. The header is the line "TANDEMREC1",
then a JSON line {"record_size", "count", "classes"}, zero-padded to 4096.
Records are in a shuffled order (seeded); the output is the same for the
same arguments. Written with the Python standard library only.

  make_records.py SRC OUT [--record-size 8K] [--seed 1]
"""
import argparse
import json
import os
import struct
import sys

from make_shards import list_samples, parse_size  # the same folder

HEADER = 4096
MAGIC = b"TANDEMREC1\n"


def size_arg(s):
    v = parse_size(s, "8K")
    if v < 16:
        raise argparse.ArgumentTypeError(f"--record-size {s}: at least 16 bytes")
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", help="ImageFolder root (one subfolder per class)")
    ap.add_argument("out", help="the records file to write (must not exist)")
    ap.add_argument("--record-size", type=size_arg,
                    help="bytes per record (default: the largest image, rounded up to 4K)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    classes, samples = list_samples(ap, args.src, args.seed)
    biggest = max(os.path.getsize(p) for p, _ in samples) + 8
    rec = args.record_size or -(-biggest // 4096) * 4096
    if rec < biggest:
        ap.error(f"--record-size {rec}: the largest image needs {biggest} bytes")
    head = MAGIC + json.dumps({"record_size": rec, "count": len(samples),
                               "classes": classes}).encode() + b"\n"
    if len(head) > HEADER:
        ap.error(f"{len(classes)} class names do not fit the {HEADER}-byte header")
    try:
        out = open(args.out, "xb")  # never over an existing dataset
    except FileExistsError:
        ap.error(f"{args.out}: already exists")
    with out:
        out.write(head.ljust(HEADER, b"\0"))
        for path, cls in samples:
            with open(path, "rb") as f:
                jpg = f.read()
            out.write((struct.pack("<II", cls, len(jpg)) + jpg).ljust(rec, b"\0"))
    print(f"{len(samples)} records of {rec} bytes, {len(classes)} classes in {args.out} "
          f"({HEADER + len(samples) * rec} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
