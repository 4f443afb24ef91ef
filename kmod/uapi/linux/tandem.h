/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Tandem generic-netlink ABI, version 1. Shared by tandem.ko and tandemctl.
 * Documented in Documentation/netlink/tandem.yaml; change it deliberately:
 * new commands and attributes are appended, never renumbered.
 */
#ifndef _UAPI_LINUX_TANDEM_H
#define _UAPI_LINUX_TANDEM_H

#define TANDEM_GENL_NAME	"tandem"
#define TANDEM_GENL_VERSION	1
#define TANDEM_MCGRP_EVENTS	"events"

#define TANDEM_NAME_MAX		64	/* dataset name, with the NUL */

enum tandem_cmd {
	TANDEM_CMD_UNSPEC,
	TANDEM_CMD_DATASET_ADD,		/* NAME -> DATASET_ID (admin) */
	TANDEM_CMD_DATASET_DEL,		/* DATASET_ID (admin) */
	TANDEM_CMD_DATASET_GET,		/* doit: DATASET_ID; dump: all */
	TANDEM_CMD_FILE_ADD,		/* DATASET_ID + FILE_PATH... (admin) */
	TANDEM_CMD_FILE_GET,		/* dump: files of DATASET_ID */
	TANDEM_CMD_STATS_GET,		/* global knobs and counters */
	TANDEM_CMD_CONFIG_SET,		/* CXL_NODE / STEER / PREFETCH_KBPS / STEER_KBPS (admin) */
	TANDEM_CMD_STEER,		/* DATASET_ID [+ DATASET_NODE]: full pass (admin) */
	TANDEM_CMD_PREFETCH,		/* DATASET_ID [+ FILE_PATH... + PREFETCH_KBPS] (admin) */
	TANDEM_CMD_PREFETCH_CANCEL,	/* DATASET_ID (admin) */
	TANDEM_CMD_PREFETCH_DONE,	/* event on "events": DATASET_ID + PREFETCH_* */
	TANDEM_CMD_DATASET_ADD_NTF,	/* event on "events": DATASET_ID + NAME */
	TANDEM_CMD_DATASET_DEL_NTF,	/* event on "events": DATASET_ID */

	__TANDEM_CMD_MAX,
	TANDEM_CMD_MAX = __TANDEM_CMD_MAX - 1
};

enum tandem_attr {
	TANDEM_A_UNSPEC,
	TANDEM_A_DATASET_ID,		/* u32, >= 1 */
	TANDEM_A_DATASET_NAME,		/* string, [A-Za-z0-9._-], 1..63 chars */
	TANDEM_A_DATASET_NFILES,	/* u32 */
	TANDEM_A_DATASET_BYTES,		/* u64: sum of file sizes */
	TANDEM_A_DATASET_PAGES_CACHED,	/* u64: pages in the page cache now */
	TANDEM_A_FILE_PATH,		/* string, absolute; repeated in FILE_ADD */
	TANDEM_A_FILE_DEV,		/* u64: st_dev (new_encode_dev) */
	TANDEM_A_FILE_INO,		/* u64 */
	TANDEM_A_FILE_SIZE,		/* u64: bytes */
	TANDEM_A_FILE_PAGES_CACHED,	/* u64 */
	TANDEM_A_FILES_ADDED,		/* u32: FILE_ADD reply */
	TANDEM_A_FILES_DUPLICATE,	/* u32: FILE_ADD reply, already registered */
	TANDEM_A_CXL_NODE,		/* s32: node, or -2 = steering disabled */
	TANDEM_A_CXL_NODE_REASON,	/* string: why this node (auto-detection) */
	TANDEM_A_STEER,			/* u8: 0/1 */
	TANDEM_A_PREFETCH_KBPS,		/* u32: KiB/s, 0 = unlimited */
	TANDEM_A_VERSION,		/* string */
	TANDEM_A_NR_DATASETS,		/* u32 */
	TANDEM_A_NR_FILES,		/* u32: all datasets */
	TANDEM_A_MAX_DATASETS,		/* u32 */
	TANDEM_A_MAX_FILES,		/* u32: per dataset */
	TANDEM_A_LIVE_OBJECTS,		/* u64: module allocations alive */
	TANDEM_A_PAD,
	TANDEM_A_STEER_KBPS,		/* u32: migration rate cap, KiB/s, 0 = unlimited */
	TANDEM_A_DATASET_NODE,		/* s32: dataset's own target node, -1 = cxl_node */
	TANDEM_A_DATASET_COUNTERS,	/* nest: u64 per enum tandem_counter, type = index + 1 */
	TANDEM_A_DATASET_NODE_PAGES,	/* nest: u64 cached pages per node, type = node + 1 */
	TANDEM_A_STEER_PENDING,		/* u32: files of the dataset queued for steering */
	TANDEM_A_PREFETCH_STATE,	/* u8: enum tandem_prefetch_state */
	TANDEM_A_PREFETCH_PAGES_DONE,	/* u64: pages read or found cached so far */
	TANDEM_A_PREFETCH_PAGES_TOTAL,	/* u64: pages of the prefetch's files */
	TANDEM_A_PREFETCH_ELAPSED_NS,	/* u64 */

	__TANDEM_A_MAX,
	TANDEM_A_MAX = __TANDEM_A_MAX - 1
};

/* Per-dataset counters (sysfs datasets/<id>/counters/, netlink DATASET_COUNTERS). */
enum tandem_counter {
	TANDEM_CNT_STEERED,		/* pages migrated to the target node */
	TANDEM_CNT_PREFETCHED,		/* pages read by prefetch onto the target node */
	TANDEM_CNT_PREFETCH_CACHED,	/* prefetch found the page cached already */
	TANDEM_CNT_MIGRATE_FAILED,	/* no memory on the target node */
	TANDEM_CNT_SKIP_LOCKED,		/* skipped: folio locked (I/O, truncate); retried */
	TANDEM_CNT_SKIP_TRUNCATED,	/* skipped: left the file meanwhile */
	TANDEM_CNT_SKIP_NOT_UPTODATE,	/* skipped: not uptodate (read error) */
	TANDEM_CNT_SKIP_DIRTY,		/* skipped: dirty */
	TANDEM_CNT_SKIP_WRITEBACK,	/* skipped: under writeback */
	TANDEM_CNT_SKIP_MAPPED,		/* skipped: mapped into a process */
	TANDEM_CNT_SKIP_PINNED,		/* skipped: maybe pinned for DMA */
	TANDEM_CNT_SKIP_PRIVATE,	/* skipped: private data that could not be released */
	TANDEM_CNT_SKIP_LARGE,		/* skipped: large folio, the kernel cannot move it (6.1) */
	TANDEM_CNT_SKIP_TARGET_FULL,	/* skipped: the target was reclaiming this dataset */
	TANDEM_CNT_STEERED_LARGE,	/* large folios migrated whole (their pages count in STEERED) */
	__TANDEM_CNT_MAX
};

enum tandem_prefetch_state {
	TANDEM_PREFETCH_IDLE,		/* never started */
	TANDEM_PREFETCH_RUNNING,
	TANDEM_PREFETCH_DONE,
	TANDEM_PREFETCH_CANCELLED,
	TANDEM_PREFETCH_FAILED,		/* stopped: no memory on the target node, or I/O setup failed */
};

#endif /* _UAPI_LINUX_TANDEM_H */
