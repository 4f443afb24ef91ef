# The SPANK plugin, built when Slurm's <slurm/spank.h> is installed (Debian's
# libslurm-dev); skipped otherwise, and the Slurm tests then SKIP. It links the
# agent's protocol code in, and nothing of Slurm: slurmstepd, srun and sbatch
# provide the spank_* symbols when they load it.

SPANK_H := $(wildcard /usr/include/slurm/spank.h)

ifneq ($(SPANK_H),)
ALL_TARGETS += $(B)/slurm/tandem_spank.so

$(B)/slurm/tandem_spank.so: slurm/tandem_spank.c ctl/lib/agent_proto.c ctl/lib/agent_proto.h \
			    ctl/lib/stagger.c ctl/lib/stagger.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -Ictl -o $@ slurm/tandem_spank.c ctl/lib/agent_proto.c \
		ctl/lib/stagger.c
endif
