# The node agent's protocol server (tandem-agent) and its libraries: the
# socket protocol (also linked into the SPANK plugin) and the Prometheus
# textfile writer. Host tests named selftests/host/test_agent_*.c link the
# sanitized archive of these instead of libtandemctl.a.

AGENT_SRCS     := $(filter-out agent/tandem_agent.c,$(wildcard agent/*.c))
AGENT_OBJS     := $(patsubst agent/%.c,$(B)/agent/%.o,$(AGENT_SRCS))
AGENT_ASANOBJS := $(patsubst agent/%.c,$(B)/asan/agent/%.o,$(AGENT_SRCS))
AGENT_TESTS    := $(patsubst selftests/host/%.c,$(B)/selftests/host/%,$(wildcard selftests/host/test_agent_*.c))

# the host tests run the agent built with ASan/UBSan
ALL_TARGETS += $(B)/tandem-agent $(B)/asan/tandem-agent

$(B)/agent/%.o: agent/%.c $(wildcard agent/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -Iagent -c -o $@ $<

$(B)/asan/agent/%.o: agent/%.c $(wildcard agent/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -Iagent -c -o $@ $<

$(B)/agent/libtandem-agent.a: $(AGENT_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/asan/agent/libtandem-agent.a: $(AGENT_ASANOBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/tandem-agent: $(B)/agent/tandem_agent.o $(B)/agent/libtandem-agent.a
	$(CC) $(CFLAGS) -o $@ $^ -lm

$(B)/asan/tandem-agent: $(B)/asan/agent/tandem_agent.o $(B)/asan/agent/libtandem-agent.a
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $^ -lm

# an explicit rule: it takes precedence over selftests.mk's pattern rule
$(AGENT_TESTS): $(B)/selftests/host/%: selftests/host/%.c $(B)/asan/agent/libtandem-agent.a $(KSFT_DIR)/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-sign-compare -Wno-unused-parameter $(SANFLAGS) $(KSFT_CFLAGS) -Iagent -Iselftests/lib \
		-o $@ $< $(B)/asan/agent/libtandem-agent.a -lm
