# eBPF programs: CO-RE objects built with clang against a vmlinux.h generated
# from the build machine's BTF, wrapped in libbpf skeletons for tandemctl.
#
#   $(B)/gen/vmlinux.h          bpftool btf dump of $(VMLINUX_BTF)
#   $(B)/bpf/tracker.bpf.o      the page-cache sharing tracker
#   $(B)/gen/tracker.skel.h     its skeleton, included by ctl/tracker/load.c
#   $(B)/bench/cachestat        the peer for bench/tracker (libbpf-tools style)
#   $(B)/bench/seqread, progstat  bench/tracker's reader and BPF run-time reader
# The three bench tools are static, so that bench/tracker/vm.sh runs them in
# the VM rig's busybox image unchanged.

BPFTOOL     ?= bpftool
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
BPF_ARCH    := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
BPF_CFLAGS  := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
	-I$(B)/gen -Ibpf
BPF_HDRS    := $(wildcard bpf/*.h)

CTL_LDLIBS  += -lbpf -lelf -lz
ALL_TARGETS += $(B)/gen/tracker.skel.h $(B)/bench/cachestat $(B)/bench/seqread \
	$(B)/bench/progstat

$(B)/gen/vmlinux.h:
	@mkdir -p $(dir $@)
	@test -r $(VMLINUX_BTF) || { echo "no BTF at $(VMLINUX_BTF): set VMLINUX_BTF=" >&2; exit 1; }
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c >$@.tmp
	mv $@.tmp $@

$(B)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) $(B)/gen/vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp.o
	$(BPFTOOL) gen object $@ $@.tmp.o
	@rm -f $@.tmp.o

$(B)/gen/%.skel.h: $(B)/bpf/%.bpf.o
	@mkdir -p $(dir $@)
	$(BPFTOOL) gen skeleton $< name $*_bpf >$@.tmp
	mv $@.tmp $@

# tandemctl's tracker loader includes the skeleton
$(B)/ctl/tracker/load.o $(B)/asan/ctl/tracker/load.o: $(B)/gen/tracker.skel.h

# bench/tracker: the peer tool, built the same way as the tracker
$(B)/bpf/cachestat.bpf.o: bench/tracker/cachestat.bpf.c $(B)/gen/vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp.o
	$(BPFTOOL) gen object $@ $@.tmp.o
	@rm -f $@.tmp.o

$(B)/bench/cachestat: bench/tracker/cachestat.c $(B)/gen/cachestat.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $< -lbpf -lelf -lz

$(B)/bench/progstat: bench/tracker/progstat.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $< -lbpf -lelf -lz


# keep the objects between the compile and the skeleton steps
.SECONDARY: $(B)/bpf/tracker.bpf.o $(B)/bpf/cachestat.bpf.o

$(B)/bench/seqread: bench/tracker/seqread.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -o $@ $<
