#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Packaging (Documentation/install.md):
#  - `make install DESTDIR=D PREFIX=/usr`, run as an unprivileged user so that
#    a write outside D fails, installs exactly packaging/install-files.txt;
#    no file named *tandem* appears outside D; what it installed works
#    (tandemctl runs, the agent's unit names the agent and documentation
#    installed, man finds the pages under D, a program builds against
#    the headers and the static and shared library through the .pc file, the
#    module is the one built); `make uninstall` removes it all again.
#  - DKMS: `make dkms-install` stages the module's sources (and, without
#    DESTDIR, would install for every kernel with headers); dkms add, build
#    for every kernel with headers in /lib/modules (TANDEM_DKMS_KERNELS= to
#    choose) and remove, all in a temporary DKMS tree with a temporary
#    signing key, so nothing is registered system-wide; each module is
#    checked with modinfo (vermagic, version, signer).
# About 21 s with two kernels (each dkms build 7 s, idle machine).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ksft.sh"
# oneline TEXT: its words on one line
oneline() { echo "$1" | tr -s ' \n' '  ' | sed 's/^ //; s/ $//'; }
B=${B:-build}
unset MAKEFLAGS MFLAGS MAKELEVEL
version=$(sed -n 's/^#define TANDEM_VERSION[[:space:]]*"\(.*\)"/\1/p' "$top/kmod/tandem.h")
have=$(for m in /lib/modules/*/build/Makefile; do
	[ -f "$m" ] && basename "$(dirname "$(dirname "$m")")"; done)
kernels=${TANDEM_DKMS_KERNELS:-$have}
nk=$(echo "$kernels" | grep -c .)
ksft_plan $((12 + 6 + nk))

tmp=$(mktemp -d /tmp/tandem-pkg-XXXXXX)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
stamp=$tmp/stamp
touch "$stamp"
sleep 1	# files written from now on are newer than the stamp

# as_user CMD...: as nobody when nobody can read the tree, else as we are
if setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$top/Makefile" -a -x "$top/$B" 2>/dev/null; then
	as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	user=nobody
else
	as_user() { "$@"; }
	user=$(id -un)
	ksft_diag "nobody cannot read $top: installing as $user, only the file search checks containment"
fi

# ---- dkms.conf ----
conf=$top/packaging/dkms.conf
ksft_check "dkms.conf: PACKAGE_VERSION is written by dkms-install (@TANDEM_VERSION@)" \
	grep -qx 'PACKAGE_VERSION="@TANDEM_VERSION@"' "$conf"
ksft_check "dkms.conf: builds tandem.ko from the top-level Kbuild (M= the top, the module found there), the module Kbuild names" \
	sh -c "grep -qx 'BUILT_MODULE_NAME\[0\]=\"tandem\"' '$conf' &&
	       ! grep -q '^BUILT_MODULE_LOCATION' '$conf' &&
	       grep -q '^MAKE\[0\]=.* M=\${dkms_tree}/\${PACKAGE_NAME}/\${PACKAGE_VERSION}/build modules\"\$' '$conf' &&
	       grep -qx 'obj-m := tandem.o' '$top/Kbuild'"

# ---- make install ----
D=$tmp/root
mkdir "$D"
[ "$user" = nobody ] && chown 65534:65534 "$D"
as_user make -s -C "$top" B="$B" install DESTDIR="$D" PREFIX=/usr >"$tmp/install.log" 2>&1
st=$?
[ $st -ne 0 ] && sed 's/^/# /' "$tmp/install.log" | tail -20
ksft_expect_eq "make install DESTDIR PREFIX=/usr as $user: exit 0" "$st" 0

ko=$(make -s -C "$top" B="$B" print-install-module 2>/dev/null)
kver=
[ -n "$ko" ] && kver=$(modinfo -F vermagic "$top/$ko" | cut -d' ' -f1)
spank=
[ -e "$top/$B/slurm/tandem_spank.so" ] && spank=1
grep -v '^#' "$top/packaging/install-files.txt" |
	if [ -n "$kver" ]; then sed "s/@KVER@/$kver/; s/ ?module$//"; else grep -v ' ?module$'; fi |
	if [ -n "$spank" ]; then sed 's/ ?spank$//'; else grep -v ' ?spank$'; fi | sort >"$tmp/want"
(cd "$D" && find . -not -type d -printf '%m %P\n' | sort) >"$tmp/got"
if diff "$tmp/want" "$tmp/got" >"$tmp/diff"; then
	ksft_pass "the DESTDIR install is packaging/install-files.txt ($(wc -l <"$tmp/got") files${kver:+, module for $kver}${spank:+, SPANK plugin})"
else
	sed 's/^/# /' "$tmp/diff"
	ksft_fail "the DESTDIR install is packaging/install-files.txt"
fi

outside=$(find /usr /lib /etc /opt /var/lib -xdev -newer "$stamp" -iname '*tandem*' -not -type d 2>/dev/null)
[ /etc/ld.so.cache -nt "$stamp" ] && outside="$outside /etc/ld.so.cache"
ksft_expect_eq "nothing named *tandem* (nor ld.so.cache) written outside DESTDIR" "$(oneline "$outside")" ""

list=$(make -s -C "$top" B="$B" install-list 2>/dev/null)
ksft_check "default PREFIX: /usr/local/sbin/tandemctl, every path under /usr/local or /lib/modules" \
	sh -c "echo '$list' | grep -qx /usr/local/sbin/tandemctl &&
	       ! echo '$list' | grep -v -e '^/usr/local/' -e '^/lib/modules/'"

ksft_expect_eq "installed tandemctl runs: --version" "$("$D/usr/sbin/tandemctl" --version 2>&1)" \
	"tandemctl $version"
# the unit names the installed agent and documentation, and the agent runs
unit=$D/usr/lib/systemd/system/tandem-agent.service
exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
docf=$(sed -n 's|^Documentation=file://||p' "$unit")
ksft_check "tandem-agent.service: ExecStart is the installed agent ($exe), Documentation= installed" \
	sh -c "[ '$exe' = /usr/sbin/tandem-agent ] && '$D$exe' --help >/dev/null && [ -f '$D$docf' ]"
ksft_check "man -M DESTDIR/usr/share/man finds tandemctl(8), tandem-agent(8), tandem(4), without warnings" \
	sh -c "[ \"\$(man -M '$D/usr/share/man' -w 8 tandemctl)\" = '$D/usr/share/man/man8/tandemctl.8' ] &&
	       [ \"\$(man -M '$D/usr/share/man' -w 8 tandem-agent)\" = '$D/usr/share/man/man8/tandem-agent.8' ] &&
	       [ \"\$(man -M '$D/usr/share/man' -w 4 tandem)\" = '$D/usr/share/man/man4/tandem.4' ] &&
	       [ -z \"\$(MANWIDTH=80 man -M '$D/usr/share/man' --warnings 4 tandem 2>&1 >/dev/null)\" ]"

# a program against the installed headers and libraries, found through the .pc file
cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <tandem.h>
#include <tandem_predict.h>
int main(void)
{
	printf("%s %d %s\n", TANDEM_GENL_NAME, TANDEM_GENL_VERSION, tp_prim_name(TP_CONV));
	return 0;
}
EOF
pc() { PKG_CONFIG_LIBDIR=$D/usr/lib/pkgconfig pkg-config --define-variable=prefix="$D/usr" "$@" tandem-predict; }
# shellcheck disable=SC2046
built=$(cc -o "$tmp/prog-static" "$tmp/prog.c" $(pc --cflags) "$D/usr/lib/libtandem-predict.a" \
	$(pc --static --libs | sed "s/-ltandem-predict//") 2>&1 &&
	cc -o "$tmp/prog-shared" "$tmp/prog.c" $(pc --cflags --libs) 2>&1)
[ -n "$built" ] && echo "$built" | sed 's/^/# /' | head -10
out_s=$("$tmp/prog-static" 2>&1)
out_d=$(LD_LIBRARY_PATH=$D/usr/lib "$tmp/prog-shared" 2>&1)
ksft_expect_eq "pkg-config tandem-predict: a program links statically and dynamically and runs" \
	"$out_s / $out_d" "tandem 1 conv / tandem 1 conv"
if [ -n "$kver" ]; then
	ksft_check "the installed module is the built one, in the release its vermagic names" \
		cmp -s "$top/$ko" "$D/lib/modules/$kver/updates/tandem.ko" ||
		ksft_diag "$ko -> $(readlink -f "$top/$ko"): $(stat -c '%s B, %y' "$top/$ko");" \
			"installed: $(ls -l "$D"/lib/modules/*/updates/tandem.ko 2>&1 | tr '\n' ' ')"
else
	ksft_skip "the installed module is the built one" "no tandem.ko built"
fi

as_user make -s -C "$top" B="$B" uninstall DESTDIR="$D" PREFIX=/usr >"$tmp/uninstall.log" 2>&1
st=$?
left=$(cd "$D" && find . -not -type d)
ksft_expect_eq "make uninstall DESTDIR PREFIX=/usr: exit 0, no file left" "$st:$(oneline "$left")" "0:"

# ---- DKMS ----
if ! command -v dkms >/dev/null; then
	for i in $(seq $((6 + nk))); do ksft_skip "dkms $i" "no dkms: run 'make deps'"; done
	ksft_finish
fi
S=$tmp/src
make -s -C "$top" B="$B" dkms-install DESTDIR="$S" >"$tmp/dkms-install.log" 2>&1
src=$S/usr/src/tandem-$version
# the objects of tandem-y, over its continued lines
objs=$(sed -n '/^tandem-y :=/,/[^\\]$/p' "$top/Kbuild" | sed 's/^tandem-y :=//; s/\\$//')
want=$( (echo dkms.conf Kbuild; for o in $objs; do echo "${o%.o}.c"; done
	cd "$top" && ls kmod/*.h kmod/uapi/linux/*.h) | tr ' ' '\n' | grep . | sort)
got=$(cd "$src" 2>/dev/null && find . -type f | sed 's|^\./||' | sort)
ksft_expect_eq "make dkms-install DESTDIR: /usr/src/tandem-$version holds dkms.conf and kmod/'s sources" \
	"$(oneline "$got")" "$(oneline "$want")"
ksft_check "the staged dkms.conf says PACKAGE_VERSION=\"$version\" (kmod/tandem.h's TANDEM_VERSION)" \
	grep -qx "PACKAGE_VERSION=\"$version\"" "$src/dkms.conf"

ksft_expect_eq "make dkms-install (no DESTDIR) would dkms install for every kernel with headers" \
	"$(oneline "$(make -s -C "$top" B="$B" print-dkms-kvers)")" "$(oneline "$have")"

# everything dkms writes goes to $tmp: its trees, its temporary files, the key
T=$tmp/dkms
mkdir -p "$T" "$tmp/dkmstmp"
# bounded: a module build takes 5-20 s here
dk() {
	timeout -k 5 300 env tmp_location="$tmp/dkmstmp" mok_signing_key="$tmp/mok.key" \
		mok_certificate="$tmp/mok.pub" \
		dkms "$@" -m tandem -v "$version" --dkmstree "$T" --sourcetree "$S/usr/src"
}
dk add >"$tmp/dkms.log" 2>&1
ksft_check "dkms add, in a temporary DKMS tree" test -L "$T/tandem/$version/source"
for k in $kernels; do
	t0=$(date +%s)
	if dk build -k "$k" >"$tmp/dkms-$k.log" 2>&1; then
		m=$(ls "$T/tandem/$version/$k/"*/module/tandem.ko* 2>/dev/null | head -n 1)
		vm=$(modinfo -F vermagic "$m" 2>/dev/null | cut -d' ' -f1)
		v=$(modinfo -F version "$m" 2>/dev/null)
		signer=$(modinfo -F signer "$m" 2>/dev/null)
		if grep -q "won't be signed" "$tmp/dkms-$k.log"; then
			signer="(unsigned: $(grep -m1 "won't be signed" "$tmp/dkms-$k.log"))"
			want_signer=$signer
		else
			want_signer="DKMS module signing key"
		fi
		ksft_expect_eq "dkms build -k $k: vermagic, version, signer ($(($(date +%s) - t0)) s)" \
			"$vm $v $signer" "$k $version $want_signer"
	else
		sed 's/^/# /' "$tmp/dkms-$k.log" | tail -5
		sed 's/^/# /' "$T/tandem/$version/build/make.log" 2>/dev/null | grep -E 'error|Error' | head -10
		ksft_fail "dkms build -k $k"
	fi
done
dk remove --all >>"$tmp/dkms.log" 2>&1
ksft_check "dkms remove --all: the temporary tree no longer has the module" test ! -e "$T/tandem"
sys=$(ls -d /var/lib/dkms/tandem 2>/dev/null
	find /lib/modules/ -xdev -newer "$stamp" -name 'tandem.ko*' 2>/dev/null)
ksft_expect_eq "nothing registered or installed system-wide (/var/lib/dkms, /lib/modules)" "$(oneline "$sys")" ""
ksft_finish
