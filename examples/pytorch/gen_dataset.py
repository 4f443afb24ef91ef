#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Write a real JPEG dataset in torchvision's ImageFolder layout.

OUT/class_NNN/img_NNNNNN.jpg: every image is drawn (shapes on a gradient, each
class with its own shape, hue and count, so a model can learn them), plus
optional noise, then JPEG-encoded by PIL. The noise sets how well an image
compresses, so --size and --noise together choose the bytes per image (and so
the dataset's bytes per decoded pixel); the output is the same for the same
arguments.

  gen_dataset.py OUT --classes 4 --per-class 250 --size 128 --noise 0.2
  gen_dataset.py OUT ... --flat FLAT   # also FLAT/: a hard link to every image
"""
import argparse
import os
import sys

import numpy as np
from PIL import Image, ImageDraw


def draw(rng, cls, nclasses, size, noise):
    """One HxWx3 image of class cls."""
    w = h = size
    hue = cls / max(nclasses, 1)
    base = np.array([np.cos(2 * np.pi * (hue + k / 3)) * 0.5 + 0.5 for k in range(3)])
    # background: a gradient in a random direction
    yy, xx = np.mgrid[0:h, 0:w] / size
    a = rng.uniform(0, 2 * np.pi)
    g = (np.cos(a) * xx + np.sin(a) * yy)[..., None]
    bg = (base * 0.4 + 0.3 * g + rng.uniform(0, 0.2, 3)) * 255
    img = Image.fromarray(np.clip(bg, 0, 255).astype(np.uint8), "RGB")
    d = ImageDraw.Draw(img)
    kind = cls % 3
    for _ in range(2 + cls % 4 + rng.integers(0, 3)):
        x0, y0 = rng.integers(0, w * 3 // 4), rng.integers(0, h * 3 // 4)
        s = rng.integers(size // 8, size // 2)
        col = tuple(int(v) for v in np.clip(base * 255 * rng.uniform(0.6, 1.2), 0, 255))
        box = [x0, y0, x0 + s, y0 + s]
        if kind == 0:
            d.ellipse(box, fill=col)
        elif kind == 1:
            d.rectangle(box, fill=col)
        else:
            d.polygon([(x0, y0 + s), (x0 + s // 2, y0), (x0 + s, y0 + s)], fill=col)
    arr = np.asarray(img, dtype=np.float32)
    if noise > 0:
        arr = arr + rng.normal(0, 255 * noise, arr.shape)
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "RGB")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--per-class", type=int, default=100)
    ap.add_argument("--size", type=int, default=128, help="side in pixels")
    ap.add_argument("--noise", type=float, default=0.1,
                    help="Gaussian noise, std as a fraction of 255 (bigger files)")
    ap.add_argument("--quality", type=int, default=90, help="JPEG quality")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--flat", help="also hard-link every image into this folder "
                    "(same files, same page cache, one folder)")
    args = ap.parse_args()
    if args.classes < 1 or args.per_class < 1 or args.size < 8:
        ap.error("--classes, --per-class >= 1, --size >= 8")
    total = 0
    for c in range(args.classes):
        cdir = os.path.join(args.out, f"class_{c:03d}")
        os.makedirs(cdir, exist_ok=True)
        for i in range(args.per_class):
            rng = np.random.default_rng([args.seed, c, i])
            path = os.path.join(cdir, f"img_{i:06d}.jpg")
            draw(rng, c, args.classes, args.size, args.noise).save(
                path, "JPEG", quality=args.quality)
            total += os.path.getsize(path)
            if args.flat:
                os.makedirs(args.flat, exist_ok=True)
                link = os.path.join(args.flat, f"c{c:03d}_{i:06d}.jpg")
                if os.path.exists(link):
                    os.unlink(link)
                os.link(path, link)
    n = args.classes * args.per_class
    print(f"{args.out}: {n} images in {args.classes} classes, {total} bytes "
          f"({total / 1048576:.1f} MiB, {total / n / 1024:.1f} KiB per image)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
