# Installation: make install / uninstall, the DKMS source tree
# (Documentation/install.md). Every path honours DESTDIR (a staging root,
# e.g. a package's) and PREFIX (default /usr/local):
#
#   make install        $(SBINDIR)/tandemctl, tandem-agent        PREFIX/sbin
#                       $(LIBDIR)/libtandem-predict.{so,a}     PREFIX/lib
#                       $(PKGCONFIGDIR)/tandem-predict.pc
#                       $(INCLUDEDIR)/tandem/tandem.h           the netlink ABI (kmod/uapi)
#                       $(INCLUDEDIR)/tandem/tandem_predict.h   the predictor's API
#                       $(MANDIR)/man8/tandemctl.8, tandem-agent.8, man4/tandem.4
#                       $(BASHCOMPDIR)/tandemctl
#                       $(SYSTEMDUNITDIR)/tandem-agent.service  its paths made these
#                       $(DOCDIR)/README.md, guide.md, install.md, slurm.md
#                       $(SPANKDIR)/tandem_spank.so, when built (libslurm-dev)
#                       /lib/modules/KVER/$(MODULE_SUBDIR)/tandem.ko, when
#                       a module has been built (KVER read from the module)
#   make uninstall      removes exactly those files (same variables)
#   make install-list   the files install creates, one per line, DESTDIR left out
#   make dkms-install   the module's sources to $(DKMS_SRCDIR); without DESTDIR
#                       also `dkms add` and `dkms install -k` for every kernel
#                       with headers in /lib/modules (DKMS_KVER="R..." to
#                       choose), and on every kernel upgrade (packaging/dkms.conf)
#   make dkms-uninstall `dkms remove --all`, then the sources
#
# Without DESTDIR, install runs depmod (module) and ldconfig (library).

PREFIX        ?= /usr/local
SBINDIR       ?= $(PREFIX)/sbin
LIBDIR        ?= $(PREFIX)/lib
PKGCONFIGDIR  ?= $(LIBDIR)/pkgconfig
INCLUDEDIR    ?= $(PREFIX)/include
MANDIR        ?= $(PREFIX)/share/man
BASHCOMPDIR   ?= $(PREFIX)/share/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
DOCDIR        ?= $(PREFIX)/share/doc/tandem
SPANKDIR      ?= $(LIBDIR)/slurm
MODULE_SUBDIR ?= updates
INSTALL       ?= install

TANDEM_VERSION := $(shell sed -n 's/^\#define TANDEM_VERSION[[:space:]]*"\(.*\)"/\1/p' kmod/tandem.h)
# one version for the package: tandemctl --version says the module's
CTL_CFLAGS    += -DTANDEM_VERSION='"$(TANDEM_VERSION)"'
$(B)/ctl/cli/main.o: kmod/tandem.h
DKMS_NAME     := tandem
DKMS_SRCDIR   ?= /usr/src/$(DKMS_NAME)-$(TANDEM_VERSION)
# the kernels dkms-install builds for: those with headers (kmod/kmod.mk's KVERS_HAVE)
DKMS_KVER     ?= $(KVERS_HAVE)
# what the module's build needs, and nothing else (the dkms test builds from it);
# dkms.conf builds from the top-level Kbuild, as kmod/kmod.mk does
DKMS_FILES    := Kbuild $(filter-out %.mod.c,$(wildcard kmod/*.c)) \
		 $(wildcard kmod/*.h) $(wildcard kmod/uapi/linux/*.h)

MAN_PAGES     := Documentation/man/tandemctl.8 Documentation/man/tandem-agent.8 \
		 Documentation/man/tandem.4
BASHCOMP      := packaging/tandemctl.bash-completion

# The module install takes: the one built for KVER (per-kernel build folders),
# else kmod/tandem.ko; the kernel release is the module's own vermagic, so it
# lands where that kernel looks for it whatever KVER says.
MODULE_KO      = $(firstword $(wildcard $(B)/kmod/$(KVER)/tandem.ko) $(wildcard kmod/tandem.ko))
MODULE_KVER    = $(if $(MODULE_KO),$(shell modinfo -F vermagic $(MODULE_KO) 2>/dev/null | cut -d' ' -f1))
MODULE_DEST    = /lib/modules/$(MODULE_KVER)/$(MODULE_SUBDIR)/tandem.ko

# "SOURCE MODE DEST" of everything install puts under $(DESTDIR), module apart;
# a SOURCE starting with ? is optional (installed when it was built). The .pc
# file is written at install time with the paths chosen then.
define INSTALL_FILES
$(B)/tandemctl 0755 $(SBINDIR)/tandemctl
$(B)/tandem-agent 0755 $(SBINDIR)/tandem-agent
$(B)/predictor/libtandem-predict.so 0755 $(LIBDIR)/libtandem-predict.so
$(B)/predictor/libtandem-predict.a 0644 $(LIBDIR)/libtandem-predict.a
kmod/uapi/linux/tandem.h 0644 $(INCLUDEDIR)/tandem/tandem.h
predictor/include/tandem_predict.h 0644 $(INCLUDEDIR)/tandem/tandem_predict.h
Documentation/man/tandemctl.8 0644 $(MANDIR)/man8/tandemctl.8
Documentation/man/tandem-agent.8 0644 $(MANDIR)/man8/tandem-agent.8
Documentation/man/tandem.4 0644 $(MANDIR)/man4/tandem.4
$(BASHCOMP) 0644 $(BASHCOMPDIR)/tandemctl
agent/tandem-agent.service 0644 $(SYSTEMDUNITDIR)/tandem-agent.service
README.md 0644 $(DOCDIR)/README.md
Documentation/guide.md 0644 $(DOCDIR)/guide.md
Documentation/install.md 0644 $(DOCDIR)/install.md
Documentation/slurm.md 0644 $(DOCDIR)/slurm.md
?$(B)/slurm/tandem_spank.so 0755 $(SPANKDIR)/tandem_spank.so
endef
export INSTALL_FILES
PC_FILE = $(PKGCONFIGDIR)/tandem-predict.pc
# a path under PREFIX as ${prefix}/..., so that --define-variable=prefix= moves it
pc_rel = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

.PHONY: install uninstall install-list install-module dkms-install dkms-uninstall \
	print-install-module print-dkms-kvers

# With everything built, install writes under $(DESTDIR) only
# (selftests/host/packaging.sh runs it as an unprivileged user to prove it).
install: $(B)/tandemctl $(B)/tandem-agent $(B)/predictor/libtandem-predict.so \
		$(B)/predictor/libtandem-predict.a $(MAN_PAGES) $(BASHCOMP)
	@echo "$$INSTALL_FILES" | while read -r src mode dst; do \
		case $$src in \?*) src=$${src#?}; [ -e "$$src" ] || continue ;; esac; \
		echo "  INSTALL $(DESTDIR)$$dst"; \
		$(INSTALL) -D -m "$$mode" "$$src" "$(DESTDIR)$$dst" || exit 1; \
	done
	@sed -i -e 's|/usr/local/sbin/tandem-agent|$(SBINDIR)/tandem-agent|' \
		-e 's|file:///usr/share/doc/tandem/|file://$(DOCDIR)/|' \
		$(DESTDIR)$(SYSTEMDUNITDIR)/tandem-agent.service
	@echo "  INSTALL $(DESTDIR)$(PC_FILE)"
	@$(INSTALL) -d $(DESTDIR)$(PKGCONFIGDIR)
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(call pc_rel,$(LIBDIR))' \
		'includedir=$(call pc_rel,$(INCLUDEDIR))' '' \
		'Name: tandem-predict' \
		'Description: training-time prediction from a computational graph (Tandem)' \
		'Version: $(TANDEM_VERSION)' \
		'Cflags: -I$${includedir}/tandem' \
		'Libs: -L$${libdir} -ltandem-predict' \
		'Libs.private: $(PRED_LDLIBS)' >$(DESTDIR)$(PC_FILE)
	@chmod 0644 $(DESTDIR)$(PC_FILE)
ifeq ($(DESTDIR),)
	-@command -v ldconfig >/dev/null && ldconfig
endif
	@if [ -n "$(MODULE_KO)" ]; then $(MAKE) --no-print-directory install-module; \
	else echo "  (no tandem.ko built: 'make module KVER=...' first, or 'make dkms-install')"; fi

install-module:
	@test -n "$(MODULE_KO)" || { echo "install-module: no tandem.ko built" >&2; exit 1; }
	@test -n "$(MODULE_KVER)" || { echo "install-module: no vermagic in $(MODULE_KO)" >&2; exit 1; }
	@echo "  INSTALL $(DESTDIR)$(MODULE_DEST) (built for $(MODULE_KVER))"
	@$(INSTALL) -D -m 0644 $(MODULE_KO) $(DESTDIR)$(MODULE_DEST)
ifeq ($(DESTDIR),)
	depmod -a $(MODULE_KVER)
endif

# the module install-module takes, for the tests ("" when none is built)
print-install-module:
	@echo $(MODULE_KO)

install-list:
	@echo "$$INSTALL_FILES" | while read -r src mode dst; do \
		case $$src in \?*) [ -e "$${src#?}" ] || continue ;; esac; echo "$$dst"; done
	@echo "$(PC_FILE)"
	@if [ -n "$(MODULE_KO)" ]; then echo "$(MODULE_DEST)"; fi

uninstall:
	@{ echo "$$INSTALL_FILES"; echo "- - $(PC_FILE)"; } | while read -r src mode dst; do \
		[ -e "$(DESTDIR)$$dst" ] || continue; \
		echo "  RM $(DESTDIR)$$dst"; rm -f "$(DESTDIR)$$dst"; \
	done
	-@rmdir "$(DESTDIR)$(INCLUDEDIR)/tandem" "$(DESTDIR)$(DOCDIR)" 2>/dev/null || true
	@for f in $(DESTDIR)/lib/modules/*/$(MODULE_SUBDIR)/tandem.ko; do \
		[ -e "$$f" ] || continue; \
		echo "  RM $$f"; rm -f "$$f"; \
		k=$${f#$(DESTDIR)/lib/modules/}; k=$${k%%/*}; \
		if [ -z "$(DESTDIR)" ]; then depmod -a "$$k"; fi; \
	done
ifeq ($(DESTDIR),)
	-@command -v ldconfig >/dev/null && ldconfig
endif

dkms-install: $(DKMS_FILES) packaging/dkms.conf
	@test -n "$(TANDEM_VERSION)" || { echo "no TANDEM_VERSION in kmod/tandem.h" >&2; exit 1; }
	@for f in $(DKMS_FILES); do $(INSTALL) -D -m 0644 $$f $(DESTDIR)$(DKMS_SRCDIR)/$$f || exit 1; done
	sed 's/@TANDEM_VERSION@/$(TANDEM_VERSION)/' packaging/dkms.conf >$(DESTDIR)$(DKMS_SRCDIR)/dkms.conf
	@chmod 0644 $(DESTDIR)$(DKMS_SRCDIR)/dkms.conf
ifeq ($(DESTDIR),)
	@dkms status -m $(DKMS_NAME) -v $(TANDEM_VERSION) | grep -q . || \
		dkms add -m $(DKMS_NAME) -v $(TANDEM_VERSION)
	@test -n "$(DKMS_KVER)" || { echo "dkms-install: no kernel headers in /lib/modules: run 'make deps'" >&2; exit 1; }
	@for k in $(DKMS_KVER); do \
		echo "dkms install -m $(DKMS_NAME) -v $(TANDEM_VERSION) -k $$k"; \
		dkms install -m $(DKMS_NAME) -v $(TANDEM_VERSION) -k "$$k" || exit 1; \
	done
endif

# the kernels dkms-install builds and installs for, for the tests
print-dkms-kvers:
	@echo $(DKMS_KVER)

dkms-uninstall:
ifeq ($(DESTDIR),)
	-dkms remove -m $(DKMS_NAME) -v $(TANDEM_VERSION) --all
endif
	rm -rf $(DESTDIR)$(DKMS_SRCDIR)
