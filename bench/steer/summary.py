#!/usr/bin/env python3
# Summaries of the bench/steer VM runs, from the rig's tap.log (stdlib only).
#   summary.py throughput TAP_LOG
#   summary.py capacity CONFIG=TAP_LOG...
import json
import re
import statistics
import sys


def kv(text):
    return {k: v for k, v in re.findall(r'(\w+)=(\S+)', text)}


def num(d, k):
    return float(d[k]) if k in d else float('nan')


def throughput(tap):
    rounds, copies = {}, {}
    for line in open(tap, errors='replace'):
        line = line.rstrip('\n')
        m = re.match(r'^R (\d+) (\S+) (\S+) (.*)$', line)
        if m:
            r, meth, phase, rest = m.groups()
            rounds.setdefault((int(r), meth), {})[phase] = kv(rest)
            continue
        m = re.match(r'^K (\d+) copy (.*)$', line)
        if m:
            copies[int(m.group(1))] = kv(m.group(2))
            continue
        m = re.match(r'^J (\d+) (\S+) (.*)$', line)
        if m:
            r, meth, js = m.groups()
            # the CLI's -j output: the first "seconds" and "pages_steered"
            d = {}
            for k in ('pages_steered', 'seconds'):
                mm = re.search(r'"%s":([0-9.eE+-]+)' % k, js)
                if mm:
                    d[k] = mm.group(1)
            rounds.setdefault((int(r), meth), {})['result'] = d
    rates, per_round = {}, {}
    # pages moved: node-0 pages before minus after, by move_pages(nodes=NULL)
    print('%-5s %-13s %9s %9s %9s %9s %8s %8s' % (
        'round', 'method', 'moved', 'reported', 'node1', 'filepg1kB', 'seconds', 'GB/s'))
    for (r, meth), ph in sorted(rounds.items()):
        b, a, res = ph.get('before', {}), ph.get('after', {}), ph.get('result', {})
        moved = num(b, 'node0') - num(a, 'node0')
        if meth == 'movepages':
            reported, secs, only = num(res, 'node1'), num(res, 'total_s'), num(res, 'move_s')
        else:
            reported, secs, only = num(res, 'pages_steered'), num(res, 'seconds'), None
        if secs != secs or moved != moved:
            print('%-5d %-13s  (no result)' % (r, meth))
            continue
        gbps = moved * 4096 / 1e9 / secs
        rates.setdefault(meth, []).append(gbps)
        per_round.setdefault(r, []).append((meth, gbps))
        note = ''
        if only:
            rates.setdefault('movepages(move_pages only)', []).append(moved * 4096 / 1e9 / only)
            note = '  (move_pages call alone: %.3f s, %.3f GB/s)' % (only, moved * 4096 / 1e9 / only)
        print('%-5d %-13s %9d %9d %9s %9s %8.3f %8.3f%s' % (
            r, meth, moved, reported, a.get('node1', '?'),
            a.get('node1_filepages_delta_kb', '?'), secs, gbps, note))
    for r, c in sorted(copies.items()):
        secs = num(c, 'seconds')
        if secs == secs:
            gbps = num(c, 'pages') * 4096 / 1e9 / secs
            rates.setdefault('copy alone', []).append(gbps)
            print('%-5d %-13s %9d %9s %9s %9s %8.3f %8.3f  (the faster of rep movsq %s s and '
                  'register copies %s s, node 0 to node 1)' % (
                      r, 'copy', num(c, 'pages'), '-', '-', '-', secs, gbps,
                      c.get('rep_s', '?'), c.get('regs_s', '?')))
    print()
    med = {k: statistics.median(v) for k, v in rates.items()}
    for k, v in sorted(med.items()):
        print('median %-28s %.3f GB/s over %d rounds' % (k, v, len(rates[k])))
    base = med.get('movepages')
    if base:
        for k in ('tandem-cli', 'tandem-sysfs', 'tandem-batch'):
            if k in med:
                print('ratio %s / movepages (mmap+fault+move_pages+munmap): %.2f' % (k, med[k] / base))
        only = med.get('movepages(move_pages only)')
        for k in ('tandem-cli', 'tandem-sysfs', 'tandem-batch'):
            if k in med and only:
                print('ratio %s / move_pages call alone: %.2f' % (k, med[k] / only))
    if 'tandem-batch' in med and 'tandem-sysfs' in med:
        print('ratio tandem-batch / tandem-sysfs (bulk allocation on/off): %.3f' % (
            med['tandem-batch'] / med['tandem-sysfs']))
        pairs = [(dict(v)['tandem-batch'], dict(v)['tandem-sysfs']) for v in per_round.values()
                 if 'tandem-batch' in dict(v) and 'tandem-sysfs' in dict(v)]
        if pairs:
            rs = sorted(a / b for a, b in pairs)
            print('  per round: %s (median %.3f, range %.3f-%.3f)' % (
                ' '.join('%.3f' % x for x in rs), statistics.median(rs), rs[0], rs[-1]))
        # The VM's rounds are bimodal (a pass takes ~1.5 s or ~2.2-2.6 s under
        # TCG whatever the method); the fastest round of each is the least
        # disturbed estimate of the method's own cost.
        print('ratio tandem-batch / tandem-sysfs, fastest rounds: %.3f (%.3f / %.3f GB/s)' % (
            max(rates['tandem-batch']) / max(rates['tandem-sysfs']),
            max(rates['tandem-batch']), max(rates['tandem-sysfs'])))
    copy = med.get('copy alone')
    if copy:
        for k in ('tandem-sysfs', 'movepages(move_pages only)'):
            if k in med:
                print('share of %s that is the 4 KiB copies: %.2f (copy alone %.3f GB/s)' % (
                    k, med[k] / copy, copy))


def capacity_one(tap):
    r = {'snap': {}, 'vmstat': {}, 'jobs': {}, 'hog': []}
    for line in open(tap, errors='replace'):
        line = line.rstrip('\n')
        if line.startswith('# config '):
            r['config'] = line[2:]
        elif line.startswith('C snap '):
            _, _, name, node, rest = line.split(' ', 4)
            r['snap'].setdefault(name, {})[node] = {k: int(v) for k, v in kv(rest).items()}
        elif line.startswith('C vmstat '):
            _, _, name, rest = line.split(' ', 3)
            r['vmstat'][name] = {k: int(v) for k, v in kv(rest).items()}
        elif line.startswith('C disk_read_sectors '):
            r['disk'] = kv(line)
        elif line.startswith('C job '):
            m = re.match(r'C job (\S+) status=(\d+) (.*)$', line)
            try:
                r['jobs'][m.group(1)] = json.loads(m.group(3))
            except ValueError:
                r['jobs'][m.group(1)] = None
        elif line.startswith('C dataset_nodes '):
            r['dataset'] = kv(line)
        elif line.startswith('C cpu '):
            f = line.split()
            r.setdefault('cpu', {})[f[2]] = [int(x) for x in f[4:]]
        elif line.startswith('C grow_at_s '):
            r['grow_at'] = line.split()[2]
        elif line.startswith('hog: '):
            r['hog'].append(line)
    return r


def mib(pages):
    return int(pages) * 4096 / 1048576


def capacity(specs):
    runs = [(s.split('=', 1)[0], capacity_one(s.split('=', 1)[1])) for s in specs]
    if runs and 'config' in runs[0][1]:
        print('# ' + runs[0][1]['config'].split(': ', 1)[-1])
    print('%-9s %9s %8s | %-26s | %-26s | %s' % (
        'config', 'disk MiB', 'wall s', 'job A epochs (s)', 'job B epochs (s)',
        'dataset pages node0/node1 MiB'))
    for name, r in runs:
        ep = {}
        for j in ('A', 'B'):
            js = r['jobs'].get(j)
            ep[j] = ' '.join('%.1f' % e['time_s'] for e in js['epochs']) if js else 'failed'
        d = r.get('dataset', {})
        print('%-9s %9s %8s | %-26s | %-26s | %.0f / %.0f' % (
            name, r.get('disk', {}).get('mib', '?'), r.get('disk', {}).get('wall_s', '?'),
            ep['A'], ep['B'], mib(d.get('node0', 0)), mib(d.get('node1', 0))))
    configs = {}
    for name, r in runs:
        configs.setdefault(name.split('.')[0], []).append(r)
    if any(len(v) > 1 for v in configs.values()):
        print()
        print('medians over the repeats (epoch k: both jobs, all runs):')
        for c, rs in configs.items():
            disk = statistics.median(float(r['disk']['mib']) for r in rs if 'disk' in r)
            eps = []
            for k in range(max(len(j['epochs']) for r in rs for j in r['jobs'].values() if j)):
                eps.append(statistics.median(j['epochs'][k]['time_s'] for r in rs
                                             for j in r['jobs'].values() if j))
            print('  %-9s disk %.0f MiB, epochs %s s (%d runs)' % (
                c, disk, ' '.join('%.1f' % e for e in eps), len(rs)))
    print()
    print('VM CPU busy over the jobs (user+system+irq, of 2 vCPUs):')
    for name, r in runs:
        cpu = r.get('cpu', {})
        if 'model' in cpu and 'end' in cpu:
            d = [b - a for a, b in zip(cpu['model'], cpu['end'])]
            idle = d[3] + d[4]
            print('  %-9s %.0f%% (iowait %.0f%%)' % (name, 100.0 * (sum(d[:8]) - idle) / sum(d[:8]),
                                                    100.0 * d[4] / sum(d[:8])))
    print()
    print('per-node memory (MiB) after the jobs [and after the model grew, if at the end]:')
    for name, r in runs:
        for snap in ('model', 'end', 'final'):
            nodes = r['snap'].get(snap, {})
            print('  %-9s %-6s %s' % (name, snap, '  '.join(
                '%s: free %d file %d anon %d' % (n, v.get('MemFree', -1), v.get('FilePages', -1),
                                                  v.get('AnonPages', -1))
                for n, v in sorted(nodes.items()))))
    print()
    print("kernel counters from the model's start to the jobs' end, /proc/vmstat deltas:")
    for name, r in runs:
        a, b = r['vmstat'].get('model', {}), r['vmstat'].get('end', {})
        keys = ('pgsteal_kswapd', 'pgsteal_direct', 'workingset_refault_file', 'numa_miss',
                'pgmigrate_success')
        print('  %-9s %s' % (name, ' '.join('%s=%d' % (k, b.get(k, 0) - a.get(k, 0)) for k in keys)))
    print()
    for name, r in runs:
        for h in r['hog']:
            print('  %-9s %s' % (name, h))
        if 'grow_at' in r:
            print('  %-9s (model grew at t=%s s of the jobs)' % (name, r['grow_at']))


if __name__ == '__main__':
    if len(sys.argv) >= 3 and sys.argv[1] == 'throughput':
        throughput(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == 'capacity':
        capacity(sys.argv[2:])
    else:
        sys.exit('usage: summary.py throughput TAP | capacity NAME=TAP...')
