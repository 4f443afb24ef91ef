#!/usr/bin/env bash
# Documentation/netlink/tandem.yaml against the kernel's genetlink schema and
# ynl spec loader (linux-source-6.12, extracted by make into build/ynl) and
# against kmod/uapi/linux/tandem.h and kmod/netlink.c (selftests/lib/netlink_spec.py).
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-build}
exec /usr/bin/python3 "$top/selftests/lib/netlink_spec.py" "$top" "$top/$B/ynl"
