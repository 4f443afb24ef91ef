# Tandem top-level Makefile.
#
#   make            build tandem.ko for the running kernel (kmod/kmod.mk: KVER=,
#                   KDIR=, vm-modules), build/tandemctl (linked at ctl/tandemctl),
#                   the BPF objects, the predictor library and the tests
#   make deps       install missing Debian packages (root)
#   make check      build, run host tests and VM tests; last line "N passed, N failed, N skipped"
#   make demo       staggering real PyTorch jobs, the predictor, the scratch tier, steering in the VM rig
#   make clean      remove everything built
#
# Userspace output goes under $(B)/ (ignored). Components add themselves through
# <component>/<component>.mk fragments, which append to the variables below.

B        ?= build
LINUX_SRC_TAR ?= /usr/src/linux-source-6.1.tar.xz

CC       ?= gcc
CLANG    ?= clang
WFLAGS   := -Wall -Wextra -Werror
CFLAGS   ?= -O2 -g
CFLAGS   += $(WFLAGS) -std=gnu11 -D_GNU_SOURCE -Ikmod/uapi -I$(B)/gen
# Userspace tests on the host run under ASan/UBSan.
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
KSFT_DIR := $(B)/ksft
KSFT_CFLAGS := -I$(KSFT_DIR)

# Filled in by the fragments.
ALL_TARGETS :=
HOST_TESTS  :=
# the build inside make check and make demo uses every CPU (3 min serial on
# 2 cores); vm-modules after all, whose kmod-default may build the same
# kernel's module in the same folder
NPROC       := $(shell nproc 2>/dev/null || echo 1)
VM_BINS     :=
CLEAN_FILES :=

.PHONY: all deps clean check check-host check-vm demo ksft checkpatch
all: kmod-default

deps:
	@bash scripts/deps.sh

# kselftest headers and checkpatch come from Debian's linux-source-6.1, not from this repo.
$(KSFT_DIR)/.stamp: | $(B)
	@mkdir -p $(KSFT_DIR)
	@test -f $(LINUX_SRC_TAR) || { echo "missing $(LINUX_SRC_TAR): run 'make deps'" >&2; exit 1; }
	tar -xJf $(LINUX_SRC_TAR) -C $(KSFT_DIR) --strip-components=1 --wildcards \
		'linux-source-6.1/tools/testing/selftests/kselftest*.h' \
		'linux-source-6.1/scripts/checkpatch.pl' \
		'linux-source-6.1/scripts/spelling.txt' \
		'linux-source-6.1/scripts/const_structs.checkpatch'
	cp $(KSFT_DIR)/tools/testing/selftests/kselftest*.h $(KSFT_DIR)/
	@touch $@
ksft: $(KSFT_DIR)/.stamp

$(B):
	@mkdir -p $(B) $(B)/gen

checkpatch: ksft
	$(KSFT_DIR)/scripts/checkpatch.pl --no-tree --terse --show-types \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f $(filter-out %.mod.c,$(wildcard kmod/*.c)) kmod/*.h kmod/uapi/linux/*.h

include $(sort $(wildcard */*.mk))

all: $(ALL_TARGETS)

check: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@$(MAKE) --no-print-directory -j$(NPROC) vm-modules
	@bash selftests/check.sh

check-host: all
	@bash selftests/run-host.sh $(HOST_TESTS)

check-vm: all vm-modules
	@bash selftests/vm/run-vm.sh

demo: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@$(MAKE) --no-print-directory -j$(NPROC) vm-modules
	@bash scripts/demo.sh

clean:
	rm -rf $(B) $(CLEAN_FILES)

print-host-tests:
	@echo $(HOST_TESTS)

print-vm-kvers:
	@echo $(VM_KVERS)
