// SPDX-License-Identifier: GPL-2.0
/*
 * Page-cache sharing tracker in the VM: the same tests as on the host
 * (selftests/host/test_tracker.h), on the data disk. Debian's 6.1 lacks the
 * read and mmap tracepoints, so the tracker falls back to fexit/fentry;
 * Debian's 6.12 has them. Then the fallbacks are forced: kprobes on both
 * kernels, fentry on 6.12 (on 6.1 it is what the default already chose).
 * The attach points each kernel must give are in one table.
 */
#include <sys/utsname.h>

#define TIMEOUT_S	280
#include "../../host/test_tracker.h"

/* attach points by kernel: the default choice, forced kprobe, forced fentry */
struct kernel_points {
	const char *release;		/* uname -r prefix */
	const char *read, *mmap;
	const char *kprobe_mmap;
	const char *fentry_read, *fentry_mmap;	/* NULL: the default is fentry */
};

static const struct kernel_points points[] = {
	{ "6.1.", "fexit/filemap_get_pages", "fentry/do_set_pte",
	  "kprobe/do_set_pte", NULL, NULL },
	{ "6.12.", "tp_btf/mm_filemap_get_pages",
	  "tp_btf/mm_filemap_map_pages+tp_btf/page_fault_user",
	  "kprobe/set_pte_range", "fexit/filemap_get_pages", "fentry/set_pte_range" },
};

static const struct kernel_points *this_kernel(void)
{
	static struct utsname u;

	uname(&u);
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
		if (!strncmp(u.release, points[i].release, strlen(points[i].release)))
			return &points[i];
	return NULL;
}

#define KERNEL_OR_SKIP(k) do {							\
	k = this_kernel();							\
	if (!k)									\
		SKIP(return, "no attach-point table for this kernel");		\
} while (0)

/* which attach point the loader chose for a hook, from tracker status -j */
static bool attached(const char *hook, const char *expect)
{
	static char out[1 << 14];
	char pat[64];
	const char *p;

	if (ctl(out, sizeof(out), "-j tracker status"))
		return false;
	snprintf(pat, sizeof(pat), "\"%s\":\"", hook);
	p = strstr(out, pat);
	return p && !strncmp(p + strlen(pat), expect, strlen(expect));
}

TEST_F_TIMEOUT(tracker, attach_points, TIMEOUT_S)
{
	const struct kernel_points *k;

	SKIP_IF_NO_BPF();
	KERNEL_OR_SKIP(k);
	EXPECT_TRUE(attached("insert", "tp_btf/mm_filemap_add_to_page_cache"));
	EXPECT_TRUE(attached("evict", "tp_btf/mm_filemap_delete_from_page_cache"));
	EXPECT_TRUE(attached("read", k->read));
	EXPECT_TRUE(attached("mmap", k->mmap));
}

FIXTURE(kprobe) {
	FIXTURE_DATA(tracker) t;
};

FIXTURE_SETUP(kprobe)
{
	tracker_fixture_setup(_metadata, &self->t, "--attach kprobe");
}

FIXTURE_TEARDOWN(kprobe)
{
	if (!self->t.skip)
		EXPECT_EQ(0, ctl(NULL, 0, "tracker unload"));
}

TEST_F_TIMEOUT(kprobe, read_shared_own, TIMEOUT_S)
{
	if (self->t.skip)
		SKIP(return, "needs root, bpf() and /sys/kernel/btf/vmlinux");
	EXPECT_TRUE(attached("read", "kprobe/filemap_get_pages+kretprobe/filemap_get_pages"));
	shared_sequence(_metadata, &self->t, "read");
}

TEST_F_TIMEOUT(kprobe, mmap_shared_own, TIMEOUT_S)
{
	const struct kernel_points *k;

	if (self->t.skip)
		SKIP(return, "needs root, bpf() and /sys/kernel/btf/vmlinux");
	KERNEL_OR_SKIP(k);
	EXPECT_TRUE(attached("mmap", k->kprobe_mmap));
	shared_sequence(_metadata, &self->t, "mmap");
}

FIXTURE(fentry) {
	FIXTURE_DATA(tracker) t;
};

FIXTURE_SETUP(fentry)
{
	const struct kernel_points *k = this_kernel();

	self->t.skip = !k || !k->fentry_mmap;
	if (!self->t.skip)
		tracker_fixture_setup(_metadata, &self->t, "--attach fentry");
}

FIXTURE_TEARDOWN(fentry)
{
	if (!self->t.skip)
		EXPECT_EQ(0, ctl(NULL, 0, "tracker unload"));
}

#define FENTRY_OR_SKIP(k) do {							\
	k = this_kernel();							\
	if (!k || !k->fentry_mmap)						\
		SKIP(return, "this kernel's default attach points are fentry already"); \
	if (self->t.skip)							\
		SKIP(return, "needs root, bpf() and /sys/kernel/btf/vmlinux");	\
} while (0)

TEST_F_TIMEOUT(fentry, read_shared_own, TIMEOUT_S)
{
	const struct kernel_points *k;

	FENTRY_OR_SKIP(k);
	EXPECT_TRUE(attached("read", k->fentry_read));
	shared_sequence(_metadata, &self->t, "read");
}

TEST_F_TIMEOUT(fentry, mmap_shared_own, TIMEOUT_S)
{
	const struct kernel_points *k;

	FENTRY_OR_SKIP(k);
	EXPECT_TRUE(attached("mmap", k->fentry_mmap));
	shared_sequence(_metadata, &self->t, "mmap");
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--reader"))
		return reader_main(argc, argv);
	tracker_test_init(getenv("DATA") ? getenv("DATA") : "/mnt/data");
	return test_harness_run(argc, argv);
}
