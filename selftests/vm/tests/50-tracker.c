// SPDX-License-Identifier: GPL-2.0
/*
 * Page-cache sharing tracker on Debian's 6.1 in the VM: the same tests as
 * on the host (selftests/host/test_tracker.h), on the ext4 data disk, where
 * the kernel lacks the read and mmap tracepoints and the tracker falls back
 * to fexit/fentry; then again with the kprobe fallbacks forced.
 */
#define TIMEOUT_S	280
#include "../../host/test_tracker.h"

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

TEST_F_TIMEOUT(tracker, attach_points_6_1, TIMEOUT_S)
{
	SKIP_IF_NO_BPF();
	EXPECT_TRUE(attached("insert", "tp_btf/mm_filemap_add_to_page_cache"));
	EXPECT_TRUE(attached("evict", "tp_btf/mm_filemap_delete_from_page_cache"));
	EXPECT_TRUE(attached("read", "fexit/filemap_get_pages"));
	EXPECT_TRUE(attached("mmap", "fentry/do_set_pte"));
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
	if (self->t.skip)
		SKIP(return, "needs root, bpf() and /sys/kernel/btf/vmlinux");
	EXPECT_TRUE(attached("mmap", "kprobe/do_set_pte"));
	shared_sequence(_metadata, &self->t, "mmap");
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--reader"))
		return reader_main(argc, argv);
	tracker_test_init(getenv("DATA") ? getenv("DATA") : "/mnt/data");
	return test_harness_run(argc, argv);
}
