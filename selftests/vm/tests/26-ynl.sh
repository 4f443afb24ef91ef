#!/bin/sh
# The kernel's own ynl CLI (linux-source-6.12's tools/net/ynl, run by the
# host's python through the read-only /host share) against the loaded
# module, driven by Documentation/netlink/tandem.yaml: state-changing
# commands (dataset-add, dataset-del), a dump of dataset-get checked against
# sysfs, and EPERM for nobody; their events on "events" are decoded by a
# listener on ynl's library (selftests/lib/ynl_listen.py: 6.12's cli.py fails
# a request when a notification arrives before its ack, so one process does
# not do both, and it can only sleep a fixed time).
. /lib/ksft/ksft.sh
KO=${TANDEM_KO:-/lib/tandem/tandem.ko}
S=/sys/kernel/tandem
D=/mnt/data/t26
YNL=$HOST_TOP/build/ynl/tools/net/ynl/cli.py
SPEC=$HOST_TOP/Documentation/netlink/tandem.yaml
JQ=/usr/bin/jq
ksft_plan 11

if [ -z "$HOST_TOP" ] || [ ! -x /host/usr/bin/python3 ] || [ ! -f "/host$YNL" ]; then
	i=0
	while [ $i -lt 11 ]; do i=$((i + 1)); ksft_skip "ynl $i" "no host root at /host, or no $YNL (make)"; done
	ksft_finish
fi
# the host's python in a chroot, with the VM's own /proc, /sys, /dev
for m in proc sys dev; do mount --bind /$m /host/$m 2>/dev/null; done
ynl() { # ynl [--user] ARGS...: one JSON document per line on stdout
	u=''
	[ "$1" = --user ] && { u='/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups'; shift; }
	# shellcheck disable=SC2086
	chroot /host $u /usr/bin/python3 "$YNL" --spec "$SPEC" --no-schema --output-json "$@"
}
cleanup() {
	tandemctl dataset del t26 >/dev/null 2>&1
	rmmod tandem 2>/dev/null
	for m in proc sys dev; do umount /host/$m 2>/dev/null; done
	rm -rf "$D"
}
elapsed() { awk -v a="$1" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN {printf "%.1f", b - a}'; }

rmmod tandem 2>/dev/null
insmod "$KO" || { ksft_fail "load"; cleanup; ksft_finish; }
mkdir -p $D
dd if=/dev/urandom of=$D/a bs=4096 count=10 2>/dev/null
dd if=/dev/urandom of=$D/b bs=1000 count=3 2>/dev/null
cat $D/a $D/b >/dev/null

# a listener on "events", until dataset-del-ntf arrives
chroot /host /usr/bin/python3 "$HOST_TOP/selftests/lib/ynl_listen.py" "${YNL%/cli.py}" "$SPEC" \
	events dataset-del-ntf 120 >/tmp/ynl.ntf 2>&1 &
listener=$!
t0=$(cut -d' ' -f1 /proc/uptime)
while ! grep -q subscribed /tmp/ynl.ntf && kill -0 $listener 2>/dev/null; do sleep 0.2; done
ksft_diag "listener subscribed after $(elapsed "$t0") s"

# a state change
t0=$(cut -d' ' -f1 /proc/uptime)
ynl --do dataset-add --json '{"dataset-name": "ynl26"}' >/tmp/ynl.out 2>&1
ksft_diag "ynl --do dataset-add: $(head -c 200 /tmp/ynl.out) ($(elapsed "$t0") s)"
id=$(head -n 1 /tmp/ynl.out | $JQ -r '."dataset-id"' 2>/dev/null)
[ -n "$id" ] || sed 's/^/# /' /tmp/ynl.out | tail -n 12
ksft_expect_eq "dataset-add (do) created the dataset sysfs shows" "$(cat $S/datasets/${id:-x}/name 2>/dev/null)" ynl26

# a dump, against sysfs
tandemctl dataset add t26 $D >/dev/null
t0=$(cut -d' ' -f1 /proc/uptime)
ynl --dump dataset-get >/tmp/ynl.out 2>&1
ksft_diag "ynl --dump dataset-get: $(elapsed "$t0") s"
ksft_expect_eq "dataset-get (dump) lists both datasets" "$($JQ -r '.[]."dataset-name"' /tmp/ynl.out 2>/dev/null | sort | tr '\n' ' ')" "t26 ynl26 "
one() { $JQ -r ".[] | select(.\"dataset-name\" == \"t26\") | $1" /tmp/ynl.out 2>/dev/null; }
id2=$(one '."dataset-id"')
ksft_expect_eq "dataset-nfiles as sysfs" "$(one '."dataset-nfiles"')" "$(cat $S/datasets/$id2/files)"
ksft_expect_eq "dataset-bytes as sysfs" "$(one '."dataset-bytes"')" "$(cat $S/datasets/$id2/bytes)"
ksft_expect_eq "dataset-pages-cached as sysfs" "$(one '."dataset-pages-cached"')" "$(cat $S/datasets/$id2/pages_cached)"
# the nest decoded by its attribute set's names, the per-node array as a list
ksft_expect_eq "dataset-counters by name (steered as sysfs)" "$(one '."dataset-counters".steered')" \
	"$(cat $S/datasets/$id2/counters/steered)"
ksft_expect_eq "dataset-node-pages as sysfs node_pages" "$(one '."dataset-node-pages" | map(tostring) | join(" ")')" \
	"$(cat $S/datasets/$id2/node_pages)"

ynl --do dataset-del --json "{\"dataset-id\": $id}" >/tmp/ynl.out 2>&1
ksft_check "dataset-del (do) removed it" [ ! -e "$S/datasets/$id" ]
wait $listener
ntf() { tail -n 1 /tmp/ynl.ntf | $JQ -r ".[] | select(.name == \"$1\") | .msg.\"$2\"" 2>/dev/null | tr '\n' ' '; }
ksft_expect_eq "dataset-add-ntf on events, for both datasets" "$(ntf dataset-add-ntf dataset-name)" "ynl26 t26 "
ksft_expect_eq "dataset-del-ntf on events, with the id" "$(ntf dataset-del-ntf dataset-id)" "$id "

# nobody (no CAP_NET_ADMIN either): the genetlink core's EPERM, nothing changes
ynl --user --do dataset-del --json "{\"dataset-id\": $id2}" >/tmp/ynl.out 2>&1
if grep -q "Operation not permitted" /tmp/ynl.out && [ -e "$S/datasets/$id2" ]; then
	ksft_pass "nobody's dataset-del: EPERM, the dataset stays"
else
	sed 's/^/# /' /tmp/ynl.out | tail -n 5
	ksft_fail "nobody's dataset-del: EPERM, the dataset stays"
fi
cleanup
ksft_finish
