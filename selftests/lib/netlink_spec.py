#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check Documentation/netlink/tandem.yaml: against the kernel's genetlink
schema (linux-source-6.12), through the kernel's own ynl spec loader, and
against the sources it describes (kmod/uapi/linux/tandem.h, kmod/netlink.c).
Prints TAP; exit 0 pass, 1 fail, 4 skip.

    netlink_spec.py TOP YNL_DIR
"""
import os
import re
import sys

top, ynl = sys.argv[1], sys.argv[2]
spec_path = os.path.join(top, 'Documentation/netlink/tandem.yaml')
schema_path = os.path.join(ynl, 'Documentation/netlink/genetlink.yaml')
results = []


def check(name, ok, diag=''):
    results.append(ok)
    if not ok and diag:
        for line in str(diag).splitlines()[:20]:
            print('# ' + line)
    print(('ok' if ok else 'not ok') + ' %d %s' % (len(results), name))


try:
    import yaml
    import jsonschema
except ImportError as e:
    print('1..0 # SKIP %s (python3-yaml, python3-jsonschema)' % e)
    sys.exit(4)
if not os.path.exists(schema_path):
    print('1..0 # SKIP no %s (make, with linux-source-6.12 installed)' % schema_path)
    sys.exit(4)
print('TAP version 13')
print('1..8')

with open(spec_path) as f:
    spec = yaml.safe_load(f)
with open(schema_path) as f:
    schema = yaml.safe_load(f)
try:
    jsonschema.validate(spec, schema)
    check('tandem.yaml validates against 6.12 genetlink.yaml', True)
except jsonschema.ValidationError as e:
    check('tandem.yaml validates against 6.12 genetlink.yaml', False,
          '%s at %s' % (e.message, '/'.join(str(p) for p in e.absolute_path)))

sys.path.insert(0, os.path.join(ynl, 'tools/net/ynl'))
try:
    from lib import SpecFamily
    fam = SpecFamily(spec_path, schema_path)
    check('the kernel\'s ynl spec loader resolves every reference', True)
except Exception as e:  # the loader raises plain exceptions on bad references
    fam = None
    check('the kernel\'s ynl spec loader resolves every reference', False, repr(e))


def uapi_enum(prefix, text):
    """NAME (lowercase, dashes) -> value, for an enum of prefix_* entries."""
    out, val = {}, 0
    for m in re.finditer(r'^\s*(%s[A-Z0-9_]+)\s*(?:=\s*(\d+))?\s*,' % prefix, text, re.M):
        if m.group(2):
            val = int(m.group(2))
        name = m.group(1)[len(prefix):].lower().replace('_', '-')
        if not name.startswith('-'):
            out[name] = val
        val += 1
    return out


with open(os.path.join(top, 'kmod/uapi/linux/tandem.h')) as f:
    uapi = f.read()
cmds = uapi_enum('TANDEM_CMD_', uapi)
attrs = uapi_enum('TANDEM_A_', uapi)
cnts = uapi_enum('TANDEM_CNT_', uapi)
states = uapi_enum('TANDEM_PREFETCH_', uapi)


def values(items, start):
    out, val = {}, start
    for it in items:
        val = it.get('value', val)
        out[it['name']] = val
        val += 1
    return out


ops = values(spec['operations']['list'], 1)
want = {k: v for k, v in cmds.items() if k not in ('unspec', 'max')}
check('operations match enum tandem_cmd', ops == want, 'spec %s\nuapi %s' % (ops, want))
sets = {s['name']: s for s in spec['attribute-sets']}
got = values(sets['tandem']['attributes'], 1)
want = {k: v for k, v in attrs.items() if k not in ('unspec', 'max')}
check('attribute set "tandem" matches enum tandem_attr', got == want,
      'spec %s\nuapi %s' % (got, want))
got = values(sets['counters']['attributes'], 1)
want = {k: v + 1 for k, v in cnts.items() if k != 'max'}
check('attribute set "counters" matches enum tandem_counter (+1)', got == want,
      'spec %s\nuapi %s' % (got, want))
defs = {d['name']: d for d in spec['definitions']}
got = {e: i for i, e in enumerate(defs['prefetch-state']['entries'])}
check('enum prefetch-state matches enum tandem_prefetch_state', got == states,
      'spec %s\nuapi %s' % (got, states))

# admin-perm exactly on the ops kmod/netlink.c registers with GENL_ADMIN_PERM
with open(os.path.join(top, 'kmod/netlink.c')) as f:
    src = f.read()
admin_src = set()
for m in re.finditer(r'\{\s*\.cmd\s*=\s*TANDEM_CMD_([A-Z_]+),(.*?)\}', src, re.S):
    if 'GENL_ADMIN_PERM' in m.group(2):
        admin_src.add(m.group(1).lower().replace('_', '-'))
admin_spec = {op['name'] for op in spec['operations']['list'] if 'admin-perm' in op.get('flags', [])}
check('flags: [admin-perm] on exactly the GENL_ADMIN_PERM operations', admin_src == admin_spec,
      'netlink.c %s\nspec %s' % (sorted(admin_src), sorted(admin_spec)))

groups = {g['name'] for g in spec['mcast-groups']['list']}
bad = [a['name'] for s in spec['attribute-sets'] for a in s['attributes']
       if a.get('type') == 'nest' and a.get('nested-attributes') not in sets]
bad += [op['name'] for op in spec['operations']['list']
        if ('event' in op or 'notify' in op) and op.get('mcgrp') not in groups]
check('nests name their attribute set, events their multicast group', not bad,
      'without: %s' % bad)
print('# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0' %
      (results.count(True), results.count(False)))
sys.exit(0 if all(results) else 1)
