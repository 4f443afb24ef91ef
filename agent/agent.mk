# The node agent (tandem-agent). Two parts:
#   the protocol server (server.c, state.c, conn.c, prom_file.c, base.c,
#   policy_fixed.c, with
#   ctl/lib/agent_proto.c, ctl/lib/stagger.c and ctl/lib/prom.c): libc only; host tests named
#   selftests/host/test_agent_*.c link its sanitized archive;
#   the node side (node.c: tracker, tandem.ko, the dataset walk; policy_model.c:
#   the makespan model deciding): on the ctl libraries (Documentation/
#   architecture.md), linked from an archive of them (every ctl folder but
#   cli/ and cmd/), so nothing of the CLI comes in.
# Variables of later fragments (CTL_CFLAGS, CTL_LDLIBS) are used in recipes
# only, which make expands when it runs them.

AGENT_CORE_SRCS := agent/server.c agent/state.c agent/conn.c agent/prom_file.c agent/base.c \
		   agent/policy_fixed.c
AGENT_NODE_SRCS := agent/node.c agent/policy_model.c
AGENT_LIBOBJS   := $(B)/ctl/lib/agent_proto.o $(B)/ctl/lib/stagger.o $(B)/ctl/lib/prom.o
AGENT_CORE_OBJS := $(patsubst agent/%.c,$(B)/agent/%.o,$(AGENT_CORE_SRCS)) $(AGENT_LIBOBJS)
AGENT_CORE_ASANOBJS := $(patsubst agent/%.c,$(B)/asan/agent/%.o,$(AGENT_CORE_SRCS)) \
		       $(patsubst $(B)/%,$(B)/asan/%,$(AGENT_LIBOBJS))
AGENT_NODE_OBJS := $(patsubst agent/%.c,$(B)/agent/%.o,$(AGENT_NODE_SRCS))
AGENT_NODE_ASANOBJS := $(patsubst agent/%.c,$(B)/asan/agent/%.o,$(AGENT_NODE_SRCS))
AGENT_TESTS     := $(patsubst selftests/host/%.c,$(B)/selftests/host/%,$(wildcard selftests/host/test_agent_*.c))
# the ctl libraries without the CLI, for the agent
AGENT_CTL_OBJS  := $(patsubst ctl/%.c,$(B)/ctl/%.o,$(filter-out ctl/cli/% ctl/cmd/%,$(wildcard ctl/*/*.c)))
AGENT_HDRS      := $(wildcard agent/*.h) ctl/lib/agent_proto.h ctl/lib/stagger.h ctl/lib/prom.h

# the host tests run the agent built with ASan/UBSan
ALL_TARGETS += $(B)/tandem-agent $(B)/asan/tandem-agent

$(B)/agent/%.o: agent/%.c $(AGENT_HDRS) $(wildcard ctl/*/*.h)
	@mkdir -p $(dir $@) $(B)/gen
	$(CC) $(CFLAGS) $(CTL_CFLAGS) -fPIC -Iagent -c -o $@ $<

$(B)/asan/agent/%.o: agent/%.c $(AGENT_HDRS) $(wildcard ctl/*/*.h)
	@mkdir -p $(dir $@) $(B)/gen
	$(CC) $(CFLAGS) $(SANFLAGS) $(CTL_CFLAGS) -Iagent -c -o $@ $<

$(B)/agent/libtandem-agent.a: $(AGENT_CORE_OBJS)
	@rm -f $@
	ar rcsP $@ $^

$(B)/asan/agent/libtandem-agent.a: $(AGENT_CORE_ASANOBJS)
	@rm -f $@
	ar rcsP $@ $^

$(B)/agent/libtandem-ctl.a: $(AGENT_CTL_OBJS) $(B)/predictor/libtandem-predict.a
	@rm -f $@
	ar rcsP $@ $(AGENT_CTL_OBJS)

$(B)/tandem-agent: $(B)/agent/tandem_agent.o $(AGENT_NODE_OBJS) $(B)/agent/libtandem-agent.a \
		   $(B)/agent/libtandem-ctl.a
	$(CC) $(CFLAGS) -o $@ $(filter %.o %.a,$^) $(CTL_LDLIBS)

$(B)/asan/tandem-agent: $(B)/asan/agent/tandem_agent.o $(AGENT_NODE_ASANOBJS) \
			$(B)/asan/agent/libtandem-agent.a $(B)/asan/libtandemctl.a
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(filter %.o %.a,$^) $(CTL_LDLIBS)

# an explicit rule: it takes precedence over selftests.mk's pattern rule
$(AGENT_TESTS): $(B)/selftests/host/%: selftests/host/%.c $(B)/asan/agent/libtandem-agent.a $(KSFT_DIR)/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-sign-compare -Wno-unused-parameter $(SANFLAGS) $(KSFT_CFLAGS) -Iagent -Ictl -Iselftests/lib \
		-o $@ $< $(B)/asan/agent/libtandem-agent.a -lm
