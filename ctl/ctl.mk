# tandemctl: every ctl/*/*.c is part of it; ctl/cli/main.c holds main().
# Folders are libraries (lib, module, tracker, loadgen, model, calibrate,
# release), the CLI (cli) and the commands on top (cmd):
# Documentation/architecture.md. Headers are included by folder,
# "module/module.h", from -Ictl.
# Other fragments may append to CTL_CFLAGS and CTL_LDLIBS, and add
# prerequisites with plain rule lines, e.g.
#   $(B)/ctl/tracker/load.o $(B)/asan/ctl/tracker/load.o: $(B)/gen/tracker.skel.h
#   $(B)/tandemctl $(B)/asan/libtandemctl.a: $(B)/predictor/libtandem-predict.a

CTL_SRCS    := $(wildcard ctl/*/*.c)
CTL_HDRS    := $(wildcard ctl/*/*.h)
CTL_OBJS    := $(patsubst ctl/%.c,$(B)/ctl/%.o,$(CTL_SRCS))
CTL_LIBOBJS := $(filter-out $(B)/ctl/cli/main.o,$(CTL_OBJS))
CTL_ASANOBJS := $(patsubst $(B)/ctl/%.o,$(B)/asan/ctl/%.o,$(CTL_LIBOBJS))
NL_CFLAGS   := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null || echo -I/usr/include/libnl3)
NL_LIBS     := $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null || echo -lnl-genl-3 -lnl-3)
CTL_CFLAGS  += $(NL_CFLAGS) -Ictl -pthread
CTL_LDLIBS  += $(NL_LIBS) -ljansson -lm -pthread

ALL_TARGETS += $(B)/tandemctl ctl/tandemctl
CLEAN_FILES += ctl/tandemctl

$(B)/ctl/%.o: ctl/%.c $(CTL_HDRS) kmod/uapi/linux/tandem.h
	@mkdir -p $(dir $@) $(B)/gen
	$(CC) $(CFLAGS) $(CTL_CFLAGS) -MMD -MP -c -o $@ $<

$(B)/asan/ctl/%.o: ctl/%.c $(CTL_HDRS) kmod/uapi/linux/tandem.h
	@mkdir -p $(dir $@) $(B)/gen
	$(CC) $(CFLAGS) $(SANFLAGS) $(CTL_CFLAGS) -MMD -MP -c -o $@ $<

# Linked from the objects, not an archive, so every TANDEM_CMD() constructor is kept.
$(B)/tandemctl: $(CTL_OBJS)
	$(CC) $(CFLAGS) -o $@ $(CTL_OBJS) $(CTL_LDLIBS)

ctl/tandemctl: $(B)/tandemctl
	ln -sf ../$(B)/tandemctl $@

# Host unit tests link this (sanitized) archive of everything but main();
# ar P keeps full paths, so two objects of one base name in two folders
# (cmd/dataset.o, module/dataset.o) are two members.
$(B)/asan/libtandemctl.a: $(CTL_ASANOBJS)
	@rm -f $@
	ar rcsP $@ $^

-include $(CTL_OBJS:.o=.d) $(CTL_ASANOBJS:.o=.d)
