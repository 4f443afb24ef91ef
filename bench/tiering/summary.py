#!/usr/bin/env python3
# Summary of bench/tiering/capacity-kmem.sh's runs (stdlib only): per
# configuration the median and range over its runs of the wall time, each
# epoch, the disk bytes, where the dataset and the model ended up, the
# model's step time while the jobs ran, the kernel's tiering counters and the
# CPU its copying and reclaim took; the limits measured in the same session;
# ratios of the medians against kernel tiering and the default kernel.
#   summary.py [--host HOST_TSV] CONFIG.REP=TAP_LOG...
import importlib.util
import os
import statistics
import sys

# bench/steer/summary.py's parser (loaded by path: both files are summary.py)
_spec = importlib.util.spec_from_file_location(
    'steer_summary', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'steer', 'summary.py'))
_steer = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_steer)
capacity_one, kv, mib = _steer.capacity_one, _steer.kv, _steer.mib

HZ = 100  # USER_HZ: /proc/stat and /proc/PID/stat ticks


def parse(tap):
    r = capacity_one(tap)
    r['kthreads'], r['steps'], r['limit'] = {}, [], {}
    for line in open(tap, errors='replace'):
        line = line.rstrip('\n')
        if line.startswith('C kthreads '):
            _, _, name, rest = line.split(' ', 3)
            r['kthreads'][name] = {k: int(v) for k, v in kv(rest).items()}
        elif line.startswith('C window '):
            d = kv(line)
            r['window'] = (float(d['t0']), float(d['t1']))
        elif line.startswith('C ckpt '):
            r['ckpt'] = {k: float(v) for k, v in kv(line).items()}
        elif line.startswith('C limit '):
            f = line.split(' ', 3)
            r['limit'][f[2]] = {k: float(v) for k, v in kv(f[3]).items()}
        elif line.startswith('hog: step '):
            r['steps'].append({k: float(v) for k, v in kv(line).items()})
        elif 'Out of memory: Killed process' in line:
            r['oom'] = r.get('oom', 0) + 1
        elif line.startswith('hog: grew by '):
            r['grew'] = True
        elif line.startswith('# vm-end vm-tiering.sh '):
            r['ok'] = line.split()[-1] == '0'
    return r


def mr(v, fmt='%.1f'):
    """median [min-max] of a list, or '-'"""
    v = [x for x in v if x == x]
    if not v:
        return '-'
    if len(v) == 1:
        return fmt % v[0]
    return (fmt + ' [' + fmt + '-' + fmt + ']') % (statistics.median(v), min(v), max(v))


def med(v):
    v = [x for x in v if x == x]
    return statistics.median(v) if v else float('nan')


def cpu_s(r, a, b, fields):
    """seconds of /proc/stat's cpu line fields (1-based after 'cpu') from a to b"""
    c = r.get('cpu', {})
    if a not in c or b not in c:
        return float('nan')
    return sum(c[b][i - 1] - c[a][i - 1] for i in fields) / HZ


def two_shuffles(t_disk, t_warm):
    """
    The shortest cold epoch of two jobs reading one dataset in independent
    random orders, each at most at its warm rate (1 / t_warm of the dataset
    per second), from a store that loads 1 / t_disk of it per second. At
    equal progress x the jobs have needed 1 - (1 - x)^2 of the dataset, so
    while the store is the limit dx/dt = (1 / t_disk) / (2 (1 - x)); that
    exceeds the jobs' own rate once 1 - x < t_warm / (2 t_disk), and from
    there they run at it. Order of loading cannot help: what the two jobs
    have needed by x is the same whoever loaded it.
    """
    left = min(1.0, t_warm / (2 * t_disk))      # 1 - x where the jobs' rate takes over
    return (1 - left * left) * t_disk + left * t_warm


def main(argv):
    host = {}
    if len(argv) >= 2 and argv[0] == '--host':
        for line in open(argv[1]):
            f = line.rstrip('\n').split('\t')
            if f[0] != 'run' and len(f) >= 6:
                host[f[0]] = f
        argv = argv[2:]
    runs = {}
    for spec in argv:
        name, tap = spec.split('=', 1)
        try:
            r = parse(tap)
        except OSError as e:
            print('%s: %s' % (name, e))
            continue
        h = host.get(name)
        r['idle'] = h is None or (float(h[2]) <= 15 and h[4] == '0' and h[5] in ('', '1', '0'))
        r['host'] = h
        runs.setdefault(name.rsplit('.', 1)[0], []).append((name, r))

    print('runs (host CPU busy over 3 s before the boot, load, other VMs before/most during):')
    for c, rs in runs.items():
        for name, r in rs:
            h = r['host']
            print('  %-18s %s%s%s%s' % (name, 'finished' if r.get('ok') else 'DID NOT FINISH',
                                       '' if not r.get('oom') else ', OOM KILLS: %d (the model: %s)' % (
                                           r['oom'], 'grew' if r.get('grew') else 'killed before it grew'),
                                     ', host %s%% busy, load %s, qemu %s/%s' % (h[2], h[3], h[4], h[5]) if h else '',
                                     '' if r['idle'] else '  NOT IDLE'))
    print()

    lim = runs.get('limits', [])
    bw = [r['limit']['cold_read']['sectors'] * 512 / r['limit']['cold_read']['seconds']
          for _, r in lim if 'cold_read' in r['limit']]
    ds_bytes = statistics.median([r['limit']['cold_read']['sectors'] * 512
                                  for _, r in lim if 'cold_read' in r['limit']]) if bw else float('nan')
    # a warm epoch counts only when it read (almost) nothing from the disk
    warm = [r['limit']['warm_epoch']['seconds'] for _, r in lim if 'warm_epoch' in r['limit'] and
            r['limit']['warm_epoch']['sectors'] * 512 <= 0.01 * ds_bytes]
    for name, r in lim:
        w = r['limit'].get('warm_epoch')
        if w and w['sectors'] * 512 > 0.01 * ds_bytes:
            print('  (%s: its warm epoch read %.0f MiB from the disk: not a warm epoch, left out)' % (
                name, w['sectors'] * 512 / 1048576))
    cold_limit = ds_bytes / med(bw) if bw else float('nan')
    shuffle_bound = two_shuffles(cold_limit, med(warm)) if warm else float('nan')
    if lim:
        print('limits (%d runs): store read cold in name order %s MiB/s; disk-bound cold epoch '
              '(dataset / that) %.1f s; warm epoch of both jobs, dataset cached: %s s' % (
                  len(lim), mr([b / 1048576 for b in bw]), cold_limit, mr(warm, '%.2f')))
        print('  cold epoch of two jobs in independent shuffles, each no faster than its warm epoch: '
              'at least %.1f s (two_shuffles() below)' % shuffle_bound)
        for name, r in lim:
            d = r.get('dataset', {})
            print('  %-18s dataset cached on node0/node1: %.0f / %.0f MiB' % (
                name, mib(d.get('node0', 0)), mib(d.get('node1', 0))))
        print()

    rows = {}
    print('%-15s %-22s %-22s %-22s %-22s %-18s' % ('config', 'wall s', 'epoch 1 s', 'epoch 2 s',
                                                  'epoch 3 s', 'disk MiB'))
    for c, rs in runs.items():
        if c == 'limits':
            continue
        rs = [r for _, r in rs if r.get('ok')]
        wall = [float(r['disk']['wall_s']) for r in rs if 'disk' in r]
        disk = [float(r['disk']['mib']) for r in rs if 'disk' in r]
        neps = max([len(j['epochs']) for r in rs for j in r['jobs'].values() if j] or [0])
        # an epoch's time for the run: the slower job's (both must finish it)
        eps = [[max(j['epochs'][k]['time_s'] for j in r['jobs'].values() if j and len(j['epochs']) > k)
                for r in rs] for k in range(neps)]
        rows[c] = {'wall': wall, 'eps': eps, 'rs': rs}
        print('%-15s %-22s %-22s %-22s %-22s %-18s' % (
            c, mr(wall), *(mr(e) for e in (eps + [[], [], []])[:3]), mr(disk, '%.0f')))
    print('(epoch k: the slower of the two jobs; median [min-max] over the runs that finished)')
    print()

    print('%-15s %-20s %-20s %-27s %-27s' % ('config', 'dataset node0 MiB', 'dataset node1 MiB',
                                             'model node0/1 MiB, jobs end', 'model step ms, jobs / alone'))
    for c, row in rows.items():
        rs = row['rs']
        dn0 = [mib(r.get('dataset', {}).get('node0', 0)) for r in rs]
        dn1 = [mib(r.get('dataset', {}).get('node1', 0)) for r in rs]
        m0, m1, sj, sa = [], [], [], []
        for r in rs:
            t0, t1 = r.get('window', (0, 0))
            during = [s for s in r['steps'] if t0 < s['t'] <= t1]
            before = [s for s in r['steps'] if s['t'] <= t0]
            if during:
                m0.append(during[-1]['node0_mib'])
                m1.append(during[-1]['node1_mib'])
                sj.append(med([s['touch_ms_p50'] for s in during]))
            if before:
                sa.append(med([s['touch_ms_p50'] for s in before]))
        print('%-15s %-20s %-20s %-27s %-27s' % (
            c, mr(dn0, '%.0f'), mr(dn1, '%.0f'), '%s / %s' % (mr(m0, '%.0f'), mr(m1, '%.0f')),
            '%s / %s' % (mr(sj, '%.2f'), mr(sa, '%.2f'))))
    print('(model step: median of the per-2-s medians of one step\'s writes, while the jobs ran '
          '/ before they started; node1 at DRAM speed in the rig)')
    print()

    keys = ('pgdemote_kswapd', 'pgpromote_success', 'numa_hint_faults', 'pgmigrate_success',
            'pgsteal_kswapd', 'pgsteal_direct', 'workingset_refault_file')
    print("kernel counters, the model's start to the jobs' end (median over the runs):")
    for c, row in rows.items():
        vals = []
        for k in keys:
            vals.append('%s=%.0f' % (k, med([r['vmstat'].get('end', {}).get(k, 0) - r['vmstat'].get('model', {}).get(k, 0)
                                              for r in row['rs']])))
        print('  %-15s %s' % (c, ' '.join(vals)))
    print()
    print('CPU seconds over the same span, of 2 vCPUs (median [range]): system+irq+softirq '
          '(all copies, reclaim and I/O), of which kswapd and kworkers (steering, prefetch)')
    for c, row in rows.items():
        sysc = [cpu_s(r, 'model', 'end', (3, 6, 7)) for r in row['rs']]
        usr = [cpu_s(r, 'model', 'end', (1, 2)) for r in row['rs']]
        ksw = [(r['kthreads']['end']['kswapd_ticks'] - r['kthreads']['model']['kswapd_ticks']) / HZ
               for r in row['rs'] if 'end' in r['kthreads'] and 'model' in r['kthreads']]
        kwk = [(r['kthreads']['end']['kworker_ticks'] - r['kthreads']['model']['kworker_ticks']) / HZ
               for r in row['rs'] if 'end' in r['kthreads'] and 'model' in r['kthreads']]
        print('  %-15s user %s, system %s, kswapd %s, kworkers %s' % (
            c, mr(usr), mr(sysc), mr(ksw, '%.2f'), mr(kwk, '%.2f')))
    print()

    ck = {c: row for c, row in rows.items() if any('ckpt' in r for r in row['rs'])}
    if ck:
        print("checkpoints of job A (loadgen --checkpoint-dir; per run: the median and the largest stall, "
              "the in-memory copy into a buffer touched before and into new memory; median [range] over the runs):")
        print('  %-12s %-5s %-20s %-20s %-20s %-20s %-14s %-20s' % (
            'config', 'n', 'stall median s', 'stall max s', 'copy s', 'copy new s', 'drained', 'durable after s'))
        for c, row in ck.items():
            a = [r['jobs'].get('A') or {} for r in row['rs']]
            n = sorted({int(j.get('checkpoint_count', 0)) for j in a})
            print('  %-12s %-5s %-20s %-20s %-20s %-20s %-14s %-20s' % (
                c, ','.join(str(x) for x in n),
                mr([j.get('checkpoint_stall_median_s', float('nan')) for j in a], '%.2f'),
                mr([j.get('checkpoint_stall_max_s', float('nan')) for j in a], '%.2f'),
                mr([j.get('checkpoint_copy_median_s', float('nan')) for j in a], '%.3f'),
                mr([j.get('checkpoint_copy_new_median_s', float('nan')) for j in a], '%.3f'),
                ','.join(sorted({'%d/%d' % (r['ckpt'].get('drained', 0), r['ckpt'].get('drained', 0) +
                                            r['ckpt'].get('pending_files', 0)) for r in row['rs'] if 'ckpt' in r})),
                mr([r['ckpt']['after_s'] for r in row['rs'] if 'ckpt' in r], '%.1f')))
        print('  (drained: files on the disk / written; durable after: from the jobs\' end until the drain was done)')
        print()

    base = {k: med(rows[k]['wall']) for k in ('tiering', 'off') if k in rows}
    print('ratios of the median wall time:')
    for c, row in rows.items():
        w = med(row['wall'])
        parts = ['%s %.3f' % ('x tiering' if k == 'tiering' else 'x default', w / b)
                 for k, b in base.items()]
        e1 = med(row['eps'][0]) if row['eps'] else float('nan')
        if cold_limit == cold_limit:
            parts.append('cold epoch %.1f s = %.3f x the disk-bound limit' % (e1, e1 / cold_limit))
        if shuffle_bound == shuffle_bound:
            parts.append('%.3f x the two-shuffle bound' % (e1 / shuffle_bound))
        print('  %-15s %s' % (c, ', '.join(parts)))


if __name__ == '__main__':
    main(sys.argv[1:])
