#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The tables of bench/plan/plan.sh's records (one JSON line per run).

    python3 bench/plan/summary.py build/bench/plan/plan.jsonl

Per scenario, over the grid runs (rep >= 1: the learned order in effect):
each schedule's measured median and range, predicted median, the plan run
and the prefetch's figures; MAPE over the runs (|measured / predicted - 1|)
and on the medians; --stagger auto against the best measured schedule and
against simultaneous start; how many runs measured inside the predicted
range over calibrate's spread (records that have it); the loads seen.
"""
import json
import statistics as st
import sys


def med(v):
    return st.median(v) if v else float('nan')


def table(runs, scen):
    rs = [r for r in runs if r['scenario'] == scen and r['rep'] >= 1]
    if not rs:
        return
    grid = []
    for r in rs:
        if r['stagger'] not in grid:
            grid.append(r['stagger'])
    print(f'#### {scen}\n')
    print('| schedule | measured median (range), n | predicted median | error (median) '
          '| plan (runs) | released at (s) | prefetch through at (s) | predicted through at (s) |')
    print('|---|---|---|---|---|---|---|---|')
    meds = {}
    errs = []
    for g in grid:
        x = [r for r in rs if r['stagger'] == g]
        m = [r['measured'] for r in x]
        p = [r['predicted'] for r in x]
        errs += [abs(r['measured'] / r['predicted'] - 1) for r in x]
        meds[g] = (med(m), med(p))
        plans = ', '.join(sorted({(r.get('plan') or {}).get('prefetch') or '-' for r in x}))
        rel = '; '.join(sorted({','.join(f"{i['requested_s']:.1f}" for i in r['inst']) for r in x}))
        fin = ', '.join('-' if not r.get('prefetch') or r['prefetch'].get('finished_s') is None
                        else f"{r['prefetch']['finished_s']:.1f}" for r in x)
        pfin = ', '.join('-' if not r.get('prefetch') or r['prefetch'].get('predicted_end_s') is None
                         else f"{r['prefetch']['predicted_end_s']:.1f}" for r in x)
        print(f'| {g} | {med(m):.2f} ({min(m):.2f}-{max(m):.2f}), {len(m)} | {med(p):.2f} '
              f'| {med(m) / med(p) - 1:+.1%} | {plans} | {rel} | {fin} | {pfin} |')
    mape_med = st.mean(abs(a / b - 1) for a, b in meds.values())
    print(f'\nMAPE over the {len(errs)} runs: {st.mean(errs):.1%} (largest {max(errs):.1%}); '
          f'on the medians: {mape_med:.1%}.')
    fixed = {g: v for g, v in meds.items() if g != 'auto'}
    best = min(fixed, key=lambda g: fixed[g][0])
    if 'auto' in meds:
        a = meds['auto'][0]
        sim = meds.get('0', (float('nan'),))[0]
        simr = [r['measured'] for r in rs if r['stagger'] == '0']
        aur = [r['measured'] for r in rs if r['stagger'] == 'auto']
        spread = max(max(simr) - min(simr), max(aur) - min(aur)) if simr and aur else float('nan')
        print(f'Best measured schedule: {best} ({fixed[best][0]:.2f} s); auto {a:.2f} s: '
              f'{a / fixed[best][0] - 1:+.1%} against it, {a / sim - 1:+.1%} against '
              f'simultaneous start ({sim:.2f} s); run-to-run spread (the larger range of 0 '
              f'and auto) {spread:.2f} s ({spread / sim:.1%}).')
    ranged = [r for r in rs if r.get('range')]
    if ranged:
        inside = sum(r['range'][0] <= r['measured'] <= r['range'][1] for r in ranged)
        width = med([(r['range'][1] - r['range'][0]) / r['predicted'] for r in ranged])
        print(f'Measured inside the predicted range (calibrate\'s spread: warm-run rates, C)'
              f': {inside} of {len(ranged)} runs; the range\'s width, median, '
              f'{width:.1%} of the prediction.')
    loads = [float(r['load_before'].split()[0]) for r in rs]
    print(f'Load (1-min, before each run): {min(loads):.1f}-{max(loads):.1f}, '
          f'median {med(loads):.1f}.\n')


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else 'build/bench/plan/plan.jsonl'
    with open(path) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    notin = [r for r in runs if r['rep'] >= 1 and not r.get('in_effect')]
    if notin:
        print(f'warning: {len(notin)} grid runs without the learned order in effect')
    scen = []
    for r in runs:
        if r['scenario'] not in scen:
            scen.append(r['scenario'])
    for s in scen:
        table(runs, s)


main()
