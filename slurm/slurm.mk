# The SPANK plugin, built when Slurm's <slurm/spank.h> is installed (Debian's
# libslurm-dev); skipped otherwise, and the Slurm tests then SKIP. It links the
# agent's client, protocol and stagger code in (libc only), and nothing of
# Slurm: slurmstepd, srun and sbatch provide the spank_* symbols when they
# load it.

SPANK_H := $(wildcard /usr/include/slurm/spank.h)

ifneq ($(SPANK_H),)
ALL_TARGETS += $(B)/slurm/tandem_spank.so

SPANK_LIBSRCS := ctl/lib/agent_client.c ctl/lib/agent_proto.c ctl/lib/stagger.c

$(B)/slurm/tandem_spank.so: slurm/tandem_spank.c $(SPANK_LIBSRCS) $(SPANK_LIBSRCS:.c=.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -Ictl -o $@ slurm/tandem_spank.c $(SPANK_LIBSRCS)
endif
