// SPDX-License-Identifier: GPL-2.0
/*
 * Page-cache sharing tracker on this machine's kernel. Needs root and BPF;
 * skips cleanly without them. Files live on the root filesystem (a real
 * block device: /var/tmp), not tmpfs, whose pages are never read from
 * storage nor evicted. The tests themselves are in test_tracker.h, shared
 * with the VM test; see there for the ground truth and the tolerance.
 */
#include "test_tracker.h"

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--reader"))
		return reader_main(argc, argv);
	tracker_test_init("/var/tmp");
	return test_harness_run(argc, argv);
}
