# Tests are added by dropping files into a folder; nothing here needs editing:
#   selftests/host/*.c   host unit tests (kselftest harness, ASan/UBSan, linked
#                        with the sanitized tandemctl archive), run by run-host.sh
#   selftests/host/*.sh  host shell tests, run by run-host.sh
#   selftests/vm/tests/*.c  VM tests, linked statically, run inside the VM
#   selftests/vm/tests/*.sh VM shell tests (busybox sh), run inside the VM
# Every test prints kselftest TAP ending in a "# Totals:" line; exit 0 = pass,
# 4 = skip, anything else = fail.

HOST_TEST_SRCS := $(wildcard selftests/host/*.c)
HOST_TEST_BINS := $(patsubst selftests/host/%.c,$(B)/selftests/host/%,$(HOST_TEST_SRCS))
HOST_TESTS     += $(HOST_TEST_BINS) $(wildcard selftests/host/*.sh)

VM_TEST_SRCS   := $(wildcard selftests/vm/tests/*.c)
VM_TEST_BINS   := $(patsubst selftests/vm/tests/%.c,$(B)/vm/tests/%,$(VM_TEST_SRCS))
VM_BINS        += $(VM_TEST_BINS)

ALL_TARGETS += $(HOST_TEST_BINS) $(VM_TEST_BINS)

$(B)/selftests/host/%: selftests/host/%.c $(wildcard selftests/host/*.h) $(B)/asan/libtandemctl.a $(KSFT_DIR)/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-sign-compare -Wno-unused-parameter $(SANFLAGS) $(CTL_CFLAGS) $(KSFT_CFLAGS) -Iselftests/lib -o $@ $< \
		$(B)/asan/libtandemctl.a $(CTL_LDLIBS)

# VM tests get ctl/lib/residency.c (libc only), the residency scan of selftests/lib/dataset.h
$(B)/vm/tests/%: selftests/vm/tests/%.c $(wildcard selftests/lib/*.h selftests/host/*.h) ctl/lib/residency.c ctl/lib/residency.h $(KSFT_DIR)/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-unused-result -Wno-sign-compare -Wno-unused-parameter $(KSFT_CFLAGS) -Iselftests/lib -Ictl -static -o $@ $< ctl/lib/residency.c
