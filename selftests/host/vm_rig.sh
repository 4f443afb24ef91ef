#!/usr/bin/env bash
# The VM rig reports what it must: a passing script passes, and a kernel
# warning in dmesg, a failing test, or a hang each make the rig fail; a
# kernel that panics while booting, before init, is booted once more and
# then fails the run; a module built for another kernel than the one to boot
# is refused.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
ksft_plan 6
if [ ! -r "$top/kmod/tandem.ko" ] || ! command -v qemu-system-x86_64 >/dev/null; then
	ksft_skip "rig" "tandem.ko or qemu missing"; ksft_skip "single"; ksft_skip "splat"; ksft_skip "hang"; ksft_skip "boot panic"; ksft_skip "vermagic"
	ksft_finish
fi
tmp=$(mktemp -d /tmp/tandem-rig-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/ok.sh" <<'EOS'
echo "TAP version 13"; echo "1..1"; echo "ok 1 fine"
echo "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0"
EOS
cat >"$tmp/splat.sh" <<'EOS'
echo "WARNING: CPU: 0 PID: 1 at fake/splat.c:1 rig_selftest" >/dev/kmsg
echo "TAP version 13"; echo "1..1"; echo "ok 1 looks fine"
echo "# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0"
EOS
cat >"$tmp/hang.sh" <<'EOS'
sleep 1000
EOS
run() { VM_LOGDIR=$tmp/logs bash "$top/selftests/vm/run-vm.sh" --quiet --script "$tmp/$1" "${@:2}" >"$tmp/$1.out" 2>&1; }
if run ok.sh; then ksft_pass "a passing script passes"; else sed 's/^/# /' "$tmp/ok.sh.out"; ksft_fail "a passing script passes"; fi
# --tcg single (make check's 6.12 lifetime boot) boots and runs the script
if run ok.sh --tcg single && grep -q 'qemu exited 0 after .*(single-threaded TCG)' "$tmp/ok.sh.out"; then
	ksft_pass "a script passes under single-threaded TCG"
else
	sed 's/^/# /' "$tmp/ok.sh.out"; ksft_fail "a script passes under single-threaded TCG"
fi
if ! run splat.sh && grep -q "dmesg-splat-after-splat.sh" "$tmp/logs/vm.results"; then
	ksft_pass "a WARNING in dmesg fails the run"
else
	sed 's/^/# /' "$tmp/splat.sh.out"; ksft_fail "a WARNING in dmesg fails the run"
fi
if ! run hang.sh --vm-timeout 25 && grep -q "vm-did-not-finish" "$tmp/logs/vm.results"; then
	ksft_pass "a hang is a failure, with the console tail"
else
	sed 's/^/# /' "$tmp/hang.sh.out"; ksft_fail "a hang is a failure"
fi
# a panic before init (no root to mount: rdinit names no program): booted
# twice, said so, and a failure
if ! run ok.sh --append rdinit=/nonexistent --vm-timeout 60 &&
	grep -q "vm-did-not-finish" "$tmp/logs/vm.results" &&
	[ "$(grep -c 'qemu exited' "$tmp/ok.sh.out")" = 2 ] &&
	grep -q 'panicked while booting, before init ran' "$tmp/ok.sh.out"; then
	ksft_pass "a panic while booting is booted once more, then fails the run"
else
	sed 's/^/# /' "$tmp/ok.sh.out"; ksft_fail "a panic while booting is booted once more, then fails the run"
fi
# two kernels: hand the rig one kernel's module while it boots the other
ko=$(readlink -f "$top/kmod/tandem.ko")
built=$(modinfo -F vermagic "$ko" | awk '{print $1}')
other=$(ls -1 /boot | sed -n 's/^vmlinuz-//p' | grep -vxF "$built" | head -n 1)
if [ -z "$other" ]; then
	ksft_skip "a module built for another kernel is refused" "one kernel in /boot"
elif ! RIG_KO=$ko run ok.sh --kernel "$other" && grep -q "built for '$built', not for the kernel to boot ($other)" "$tmp/ok.sh.out"; then
	ksft_pass "a module built for $built is refused when booting $other"
else
	sed 's/^/# /' "$tmp/ok.sh.out"; ksft_fail "a module built for another kernel is refused"
fi
ksft_finish
