// SPDX-License-Identifier: GPL-2.0
/*
 * Page-cache sharing tracker on this machine's kernel. Needs root and BPF;
 * skips cleanly without them. Files live on the root filesystem (a real
 * block device: /var/tmp), not tmpfs, whose pages are never read from
 * storage nor evicted. The tests themselves are in test_tracker.h, shared
 * with the VM test; see there for the ground truth and the tolerance.
 */
#include "test_tracker.h"

/*
 * Host only (6.18, the tracepoint flavour): copy-on-write faults on a private
 * mapping, which trk_tp_page_fault leaves to trk_tp_filemap_fault. On 6.1's
 * and 6.12's fentry/kprobe flavours the page set is the anonymous copy, not
 * counted there.
 */
TEST_F_TIMEOUT(tracker, mmap_private_write, TIMEOUT_S)
{
	SKIP_IF_NO_BPF();
	shared_sequence(_metadata, self, "mmap-cow");
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--reader"))
		return reader_main(argc, argv);
	tracker_test_init("/var/tmp");
	return test_harness_run(argc, argv);
}
