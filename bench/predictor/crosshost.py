#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Cross-host leave-architecture-out error of the 224x224 cost baseline.

For every architecture profiled both in the training set (one host) and in
a scored set (runs of another host): fit the baseline (`tandemctl predict
train --base-only`) on the training set without that architecture, predict
the scored host's runs of it, and report the MAPE; the same for the
training host's own runs of those architectures (same-host reference).
`--probe-args` are passed to every prediction (default --no-probe: the
training set's host was never probed, so no mapping can be applied).

    python3 bench/predictor/crosshost.py --train predictor/data/r224-2026-12-03/runs.csv \
        --score NAME=CSV[:ONNXDIR] ... [--tandemctl build/tandemctl]
"""
import argparse, csv, io, json, os, subprocess, sys, tempfile


def read_runs(path):
    lines = [l for l in open(path) if not l.startswith('#')]
    return list(csv.DictReader(io.StringIO(''.join(lines))))


def header(path):
    return [l for l in open(path) if l.startswith('#')]


def predict(t, onnx, batch, model, extra):
    out = subprocess.run([t, '-j', 'predict', onnx, '--batch', str(batch), '--model', model]
                         + extra, capture_output=True, text=True, check=True).stdout
    return json.loads(out)['compute_s']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--train', required=True)
    ap.add_argument('--score', action='append', required=True)
    ap.add_argument('--tandemctl', default='build/tandemctl')
    ap.add_argument('--probe-args', default='--no-probe')
    a = ap.parse_args()
    extra = a.probe_args.split()
    train = read_runs(a.train)
    tdir = os.path.dirname(os.path.abspath(a.train))
    tmp = tempfile.mkdtemp(prefix='tandem-crosshost-')
    os.symlink(os.path.join(tdir, 'onnx'), os.path.join(tmp, 'onnx'))
    models = {}

    def model_without(arch):
        if arch not in models:
            csvp = os.path.join(tmp, arch + '.csv')
            with open(csvp, 'w') as f:
                f.writelines(header(a.train))
                w = csv.DictWriter(f, fieldnames=list(train[0].keys()))
                w.writeheader()
                w.writerows(r for r in train if r['arch'] != arch)
            models[arch] = os.path.join(tmp, arch + '.tpm')
            subprocess.run([a.tandemctl, 'predict', 'train', '--data', csvp, '--base-only',
                            '--out', models[arch]], check=True, capture_output=True)
        return models[arch]

    tarchs = {r['arch'] for r in train}
    for spec in a.score:
        name, rest = spec.split('=', 1)
        path, _, odir = rest.partition(':')
        odir = odir or os.path.dirname(os.path.abspath(path))
        runs = [r for r in read_runs(path) if r['arch'] in tarchs]
        archs = sorted({r['arch'] for r in runs})
        errs, same, ratio = [], [], []
        for arch in archs:
            m = model_without(arch)
            for r in (r for r in runs if r['arch'] == arch):
                onnx = os.path.join(odir, r['onnx'])
                p = predict(a.tandemctl, onnx, r['batch'], m, extra)
                t = float(r['time_median_s'])
                errs.append(abs(p - t) / t)
                tr = [x for x in train if x['arch'] == arch and x['batch'] == r['batch']]
                if tr:
                    ratio.append(t / float(tr[0]['time_median_s']))
                print(f'{name} {arch} batch {r["batch"]}: measured {t:.4f} s, '
                      f'predicted {p:.4f} s ({100 * (p - t) / t:+.1f} %)')
            for r in (r for r in train if r['arch'] == arch):
                p = predict(a.tandemctl, os.path.join(tdir, r['onnx']), r['batch'], m, extra)
                t = float(r['time_median_s'])
                same.append(abs(p - t) / t)
        ratio.sort()
        print(f'== {name}: {len(archs)} architectures, {len(errs)} runs: cross-host MAPE '
              f'{100 * sum(errs) / len(errs):.1f} %; the same architectures on the training '
              f'host ({len(same)} runs): {100 * sum(same) / len(same):.1f} %; scored / training '
              f'host time at equal batch: median {ratio[len(ratio) // 2]:.2f} '
              f'({ratio[0]:.2f}-{ratio[-1]:.2f}, {len(ratio)} runs)')


if __name__ == '__main__':
    sys.exit(main())
