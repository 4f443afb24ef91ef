# Benchmarks (not run by `make check`; see Documentation/results/steering.md).
#   $(B)/bench/steerbench   static helper for bench/steer/*.sh, run inside the VM rig
# bench/tracker's binaries are built by bpf/bpf.mk.

STEERBENCH := $(B)/bench/steerbench
ALL_TARGETS += $(STEERBENCH)

$(STEERBENCH): bench/steer/steerbench.c ctl/lib/residency.c ctl/lib/residency.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ictl -static -o $@ $< ctl/lib/residency.c

.PHONY: bench-steer
bench-steer: $(STEERBENCH) module
	bash bench/steer/throughput.sh
	bash bench/steer/capacity.sh
