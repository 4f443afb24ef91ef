# tandem.ko, built out of tree for one kernel at a time, each kernel in its
# own folder so that builds for several kernels never mix:
#
#   $(B)/kmod/<KVER>/tandem.ko   the module for kernel release <KVER>
#   kmod/tandem.ko               a link to the one built last
#
#   make                   for the running kernel when its headers are installed;
#                          otherwise a note says which kernels have headers
#   make module KVER=R     for /lib/modules/R/build
#   make module KDIR=DIR   for the kernel build tree DIR (KVER from its utsrelease.h)
#   make vm-modules        for every kernel the VM rig can boot (VM_KVERS: an
#                          image in /boot and headers in /lib/modules)
#   make sparse            sparse (C=2) for KVER, or for every VM kernel, in the
#                          module's folder (kmod/tandem.ko left as it is)
#
# The sources stay in kmod/; the build folder holds links to them in the
# tree's own layout (Kbuild, kmod/), so the kernel builds it as it does from
# the top: make -C /lib/modules/<KVER>/build M=$PWD (top-level Kbuild).

KRUNNING   := $(shell uname -r)
KVERS_HAVE := $(sort $(patsubst /lib/modules/%/build/Makefile,%,$(wildcard /lib/modules/*/build/Makefile)))
VM_KVERS   ?= $(filter $(KVERS_HAVE),$(sort $(patsubst /boot/vmlinuz-%,%,$(wildcard /boot/vmlinuz-*))))

ifdef KDIR
KVER ?= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
else
ifndef KVER
KVER := $(filter $(KRUNNING),$(KVERS_HAVE))
endif
KDIR := /lib/modules/$(KVER)/build
endif
KO_DIR  = $(B)/kmod/$(KVER)
KMOD_SRCS := $(filter-out %.mod.c,$(wildcard kmod/*.c)) $(wildcard kmod/*.h)

define KVER_HELP
tandem.ko: no kernel headers for the running kernel $(KRUNNING) (/lib/modules/$(KRUNNING)/build).
  Kernels with headers here: $(or $(KVERS_HAVE),none: run 'make deps').
  Choose one: make module KVER=<release>, or KDIR=<kernel build dir>;
  'make vm-modules' builds for each kernel the VM rig boots ($(VM_KVERS)).
endef
export KVER_HELP

.PHONY: module vm-modules kmod-default sparse
ifeq ($(KVER),)
module:
	@echo "$$KVER_HELP" >&2; exit 1
kmod-default:
	@echo "$$KVER_HELP" | sed '1s/^/note: /' >&2
else
kmod-default: module
module:
	@test -f $(KDIR)/Makefile || { echo "tandem.ko: no kernel headers at $(KDIR) (KVER=$(KVER)): run 'make deps' or set KDIR=" >&2; exit 1; }
	@mkdir -p $(KO_DIR)/kmod
	@find $(KO_DIR) -maxdepth 1 -type l -delete	# the folder's layout before kmod/
	@find $(KO_DIR)/kmod -maxdepth 1 -xtype l -delete
	@ln -sfn $(CURDIR)/Kbuild $(KO_DIR)/Kbuild
	@for f in $(KMOD_SRCS); do ln -sfn $(CURDIR)/$$f $(KO_DIR)/kmod/; done
	@ln -sfn $(CURDIR)/kmod/uapi $(KO_DIR)/kmod/uapi
	$(MAKE) -C $(KDIR) M=$(abspath $(KO_DIR)) modules
	@ln -sfn $(abspath $(KO_DIR))/tandem.ko kmod/tandem.ko
	@echo "tandem.ko: built for $(KVER): $(KO_DIR)/tandem.ko (kmod/tandem.ko links to it)"
endif

vm-modules:
	@test -n "$(VM_KVERS)" || { echo "tandem.ko: no kernel with both an image in /boot and headers: run 'make deps'" >&2; exit 1; }
	@for k in $(VM_KVERS); do $(MAKE) --no-print-directory module KVER=$$k KDIR=/lib/modules/$$k/build || exit 1; done

# sparse for the chosen kernel, or for every kernel the rig boots
ifeq ($(KVER),)
sparse:
	@for k in $(VM_KVERS); do $(MAKE) --no-print-directory sparse KVER=$$k || exit 1; done
else
# in the module's folder as it is (make module first only where a source has
# no link there yet), leaving kmod/tandem.ko and the folder's links alone:
# selftests/host/kernel_style.sh runs beside packaging.sh, which installs the
# module the link names, and make module re-points it kernel by kernel
sparse:
	@for f in Kbuild $(KMOD_SRCS); do test -e $(KO_DIR)/$$f || \
		{ $(MAKE) --no-print-directory module || exit 1; break; }; done
	$(MAKE) -C $(KDIR) M=$(abspath $(KO_DIR)) C=2 modules
endif

CLEAN_FILES += kmod/tandem.ko

# The kernel's netlink spec schema and ynl CLI, from Debian's linux-source-6.12
# (selftests/host/netlink_spec.sh; the VM's 26-ynl.sh runs it through /host).
YNL_SRC_TAR ?= /usr/src/linux-source-6.12.tar.xz
YNL_DIR     := $(B)/ynl
ifneq ($(wildcard $(YNL_SRC_TAR)),)
ALL_TARGETS += $(YNL_DIR)/.stamp
endif
$(YNL_DIR)/.stamp: $(YNL_SRC_TAR)
	@mkdir -p $(YNL_DIR)
	tar -xJf $(YNL_SRC_TAR) -C $(YNL_DIR) --strip-components=1 --wildcards \
		'linux-source-6.12/tools/net/ynl/cli.py' 'linux-source-6.12/tools/net/ynl/lib/*.py' \
		'linux-source-6.12/Documentation/netlink/genetlink*.yaml'
	@touch $@
