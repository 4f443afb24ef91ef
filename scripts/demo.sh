#!/usr/bin/env bash
# make demo: boot the VM rig (node 1 = CPU-less "CXL" memory, throttled
# virtio disk) and run the main job on its embedded default.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash selftests/vm/run-vm.sh --script scripts/demo-vm.sh --timeout 540 --vm-timeout 600 |
	sed -e '/^# vm-begin/d' -e '/^# vm-end/d' -e '/^# vm-done/d'
