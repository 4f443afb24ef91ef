#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Listen on a generic netlink family's multicast group with the kernel's ynl
library (tools/net/ynl/lib) until a notification named STOP arrives or
TIMEOUT seconds pass; print "subscribed" once listening, then the
notifications as one JSON list (ynl's own decoding, as cli.py prints them).
Used by selftests/vm/tests/26-ynl.sh (cli.py can only sleep a fixed time).

    ynl_listen.py YNL_DIR SPEC GROUP STOP TIMEOUT
"""
import json
import select
import sys
import time

sys.path.insert(0, sys.argv[1])
from lib import YnlFamily  # noqa: E402

spec, group, stop, timeout = sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
ynl = YnlFamily(spec, '')
ynl.ntf_subscribe(group)
print('subscribed', flush=True)
end = time.time() + timeout
while time.time() < end and not any(m['name'] == stop for m in ynl.async_msg_queue):
    select.select([ynl.sock], [], [], max(0.0, end - time.time()))
    ynl.check_ntf()
print(json.dumps(ynl.async_msg_queue, default=lambda o: o.hex() if isinstance(o, bytes) else list(o)))
