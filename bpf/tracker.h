/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the page-cache sharing tracker's BPF programs
 * (bpf/tracker.bpf.c) and its loader in tandemctl (ctl/tracker*.c).
 * Every map named here is pinned under the tracker's bpffs directory, so
 * one tandemctl process can load the tracker, another register a job and a
 * third read the counters.
 *
 * Units: pages are PAGE_SIZE (4 KiB) units, whatever the folio size:
 * TANDEM_TRK_PAGE_SIZE bytes each, the one definition userspace uses.
 */
#ifndef TANDEM_BPF_TRACKER_H
#define TANDEM_BPF_TRACKER_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* bytes of one page of the counts (u64: a page count times it never wraps) */
#define TANDEM_TRK_PAGE_SIZE	4096ULL
#define TANDEM_TRK_NAME_LEN	48
/* bumped when a pinned map's layout changes; the loader refuses a mismatch */
#define TANDEM_TRK_VERSION	10	/* 10: taskgen; 9: the fault gauge in meta; 8: read hits summed per thread */

/* jobs[].flags */
#define TANDEM_TRK_JOB_EXITED	1U	/* exit_code is valid */

/* Hooks whose attach point is chosen at load time (see ctl/tracker/load.c). */
enum tandem_trk_hook {
	TANDEM_TRK_HOOK_INSERT,		/* a folio enters the page cache */
	TANDEM_TRK_HOOK_EVICT,		/* a folio leaves the page cache */
	TANDEM_TRK_HOOK_FORK,
	TANDEM_TRK_HOOK_EXIT,
	TANDEM_TRK_HOOK_READ,		/* read()/pread() of cached folios */
	TANDEM_TRK_HOOK_MMAP,		/* page-table entries to cached pages */
	TANDEM_TRK_NR_HOOKS,
};

/* How the programs learn which pages a read or a fault touched. */
enum tandem_trk_read_mode {
	TANDEM_TRK_READ_TP_RANGE = 1,	/* mm_filemap_get_pages tracepoint */
	TANDEM_TRK_READ_BATCH,		/* the folio batch filemap_get_pages() returns */
};

/* the inode as the kernel names it: what the filter and the file table hash */
struct tandem_trk_file_key {
	__u64 dev;	/* inode->i_sb->s_dev: kernel dev_t, (major << 20) | minor */
	__u64 ino;
};

/* a dataset file, as a lookup in the file table finds it */
struct tandem_trk_file {
	__u32 dataset;
	__u32 file_id;	/* high half of the page-state key */
};

/*
 * files: the file table, the tracker's own open-addressed hash table in an
 * array (BPF_F_MMAPABLE: tandemctl writes it in place), so that a file
 * costs its 16-byte slot and nothing else (a kernel hash map costs about
 * 110 bytes per preallocated entry). tandem_trk_file_slots(max_files)
 * slots: the load factor stays at or under 3/4. A file's slot is the first
 * free one from its home (tandem_trk_slot_home()) on, wrapping (linear
 * probing); tandemctl never puts a file more than TANDEM_TRK_FILE_PROBES - 1
 * slots past its home (registration grows the table instead), so a lookup
 * stops at an empty slot or after that many. Slots are written once: files
 * are never unregistered, and a reload builds a new table.
 *
 * Publishing a slot: tandemctl writes the file's dataset into its fileinfo,
 * then ino and dev, then file_id (a release store). A lookup ignores a slot
 * with file_id 0 (empty, or being written: the end of the probe sequence,
 * as it was before the write began) and one whose ino and dev are not the
 * key's, and a file whose fileinfo has no dataset yet: a file being
 * registered may look like no dataset's file for that moment, and no file
 * ever looks like another one.
 */
struct tandem_trk_slot {
	__u64 ino;
	__u32 dev;
	__u32 file_id;	/* 1..max_files; 0: free */
};

#define TANDEM_TRK_FILE_PROBES	512

static inline __u32 tandem_trk_file_slots(__u32 max_files)
{
	return max_files + max_files / 3 + 1;
}

/* h: tandem_trk_filter_hash(); its bits 8..63, as the filter uses 0..15 and 58..63 */
static inline __u32 tandem_trk_slot_home(__u64 h, __u32 nslots)
{
	return (__u32)((h >> 8) % nslots);
}

/*
 * fileinfo: per file_id, 24 bytes. tandemctl writes dataset, pbase and
 * npages before it publishes the file's slot, and never changes them; the
 * BPF programs keep the rest (bpf/tracker_state.bpf.h).
 */
struct tandem_trk_fileinfo {
	__u32 dataset;		/* never 0 once the file is published */
	__u32 loader;		/* LOADER_UNSET, LOADER_MIXED or job + 1 */
	__u32 evicts;		/* evictions of the file's folios, wrapping */
	__u32 fresh;		/* the file's fresh pages (TANDEM_TRK_PG_FRESH) */
	__u32 pbase;		/* the word in `pages` of the file's page 0 */
	__u32 npages;		/* pages with a word: 0 .. npages - 1 */
};

#define TANDEM_TRK_DATASET_MAX		0xffffU	/* dataset ids tandemctl hands out */

/*
 * filter: a bitmap over (dev, ino) that every hook tests before it looks
 * anything up, so that an event on a file of no dataset costs a few loads
 * and no map lookup. tandemctl sets a file's bit before it adds the file to
 * `files`; bits are never cleared (a false positive costs a lookup in
 * `files`, a few probes). One bit per file, in an array of
 * TANDEM_TRK_FILTER_BITS_PER_FILE x max_files bits (a power of two), so at
 * most 1/16 of other files pass it when every file slot is in use.
 */
#define TANDEM_TRK_FILTER_BITS_PER_FILE	16

static inline __u64 tandem_trk_filter_hash(__u64 dev, __u64 ino)
{
	__u64 x = ino ^ (dev << 32) ^ dev;

	/* splitmix64's finaliser: every input bit moves every output bit */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* filter words (__u64) for MAX_FILES files: a power of two, at least 64 */
static inline __u32 tandem_trk_filter_words(__u32 max_files)
{
	__u64 want = (__u64)max_files * TANDEM_TRK_FILTER_BITS_PER_FILE / 64;
	__u32 words = 64;

	while (words < want && words < (1U << 26))
		words <<= 1;
	return words;
}

/* word index is the hash's low bits; bit number its top 6 */
#define TANDEM_TRK_FILTER_WORD(h, words)	((__u32)((h) & ((words) - 1)))
#define TANDEM_TRK_FILTER_BIT(h)		((__u32)((h) >> 58))

/*
 * pages: the page state, one 64-bit word per registered page of a dataset
 * file (an array: 8 bytes per page, allocated when the tracker is loaded),
 * the file's pages at fileinfo.pbase .. pbase + npages - 1. tandemctl
 * hands each registered file its pages' words when it registers it (the
 * file's size then, in pages); a page past them, or past the array, has
 * no state and counts as overflow. A word is 0 while its page is not
 * cached; the programs set it when the page enters the page cache and
 * clear it when it leaves (bpf/tracker_state.bpf.h):
 *   bits  0..31  the job that loaded the page (0: no tracked job)
 *   bits 32..56  the last process that mapped it, hashed (0: none)
 *   bits 57..61  log2 of the folio it came in (6.18 maps whole folios)
 *   bit  62      fresh: inserted by its loader, not read by it yet
 *   bit  63      cached: the word holds a state
 */
#define TANDEM_TRK_PG_CACHED		(1ULL << 63)
#define TANDEM_TRK_PG_FRESH		(1ULL << 62)
#define TANDEM_TRK_PG_ORDER_SHIFT	57
#define TANDEM_TRK_PG_ORDER_MASK	0x1fULL
#define TANDEM_TRK_PG_MAPPER_SHIFT	32
#define TANDEM_TRK_PG_MAPPER_MASK	0x1ffffffULL	/* 25 bits */

/* counts: per (job, dataset), per CPU */
struct tandem_trk_ckey {
	__u32 job;	/* 0: processes in no tracked job */
	__u32 dataset;
};

struct tandem_trk_counts {
	__u64 miss;		/* pages inserted while this job was running */
	__u64 first_access;	/* the job's first access to a page it missed */
	__u64 own_hit;		/* accesses to cached pages this job loaded */
	__u64 shared_hit;	/* accesses to cached pages loaded by others */
	__u64 evict;		/* pages this job loaded that left the cache */
};

/* matrix: shared hits per (reader, loader, dataset), per CPU */
struct tandem_trk_mkey {
	__u32 reader;
	__u32 loader;	/* 0: no tracked job, or loaded before tracking */
	__u32 dataset;
	__u32 pad;
};

/*
 * jobs: written only by tandemctl. The job's live processes are the tasks
 * entries holding its id (the fork/exit programs keep those).
 */
struct tandem_trk_job {
	__u32 root_pid;
	__u32 pad0;
	__u64 start_time;	/* CLOCK_REALTIME seconds */
	__s32 exit_code;	/* of the root, as a shell reports it */
	__u32 flags;		/* TANDEM_TRK_JOB_* */
	__u32 dataset;		/* --dataset given to track, 0 if none */
	__u32 pad;
	char name[TANDEM_TRK_NAME_LEN];
};

/* datasets: written and read only by tandemctl */
struct tandem_trk_dataset {
	__u32 files;
	__u32 pad;
	__u64 pages;		/* size of its files in pages, when registered */
	char name[TANDEM_TRK_NAME_LEN];
};

/* global: one per-CPU slot of tracker-wide event counters */
struct tandem_trk_global {
	__u64 inserted;		/* pages that got a state */
	__u64 removed;		/* pages whose state was deleted (eviction) */
	__u64 insert_failed;	/* pages that got no state: no word for them (overflow) */
	__u64 evict_unknown;	/* dataset page evicted with no state */
	__u64 access_unknown;	/* dataset page read with no state */
	__u64 counter_full;	/* counts or matrix map full */
	__u64 task_full;	/* tasks map full: a forked process untracked */
	__u64 range_capped;	/* pages skipped by the per-event bound */
	__u64 index_too_big;	/* page index does not fit 32 bits */
	__u64 pending_alloc_failed;
	__u64 fault_vma_cached;	/* user faults in a VMA the thread had looked up (layout 3) */
};

/* meta: one slot, written by the loader, for `tracker status` */
#define TANDEM_TRK_ATTACH_LEN	80	/* layout 5: 56 before */
struct tandem_trk_meta {
	__u32 version;
	__u32 max_pages;	/* words in `pages` */
	__u32 max_files;
	__u32 read_mode;
	__u64 load_time;	/* CLOCK_REALTIME seconds */
	char attach[TANDEM_TRK_NR_HOOKS][TANDEM_TRK_ATTACH_LEN];
	/* pages with a state (words set), kept by the BPF programs */
	__u64 pages_tracked;
	__u32 flags;		/* TANDEM_TRK_META_* (layout 4) */
	__u32 pad;
	/*
	 * Threads with a fault pending now: a gauge, not a count; while it is
	 * 0 a fault that cannot be one of a dataset page looks nothing up.
	 * Layout 9: shared by every CPU (in layout 8 it was a field of the
	 * per-CPU `global`, whose one CPU's copy the programs took for the
	 * total). In a cache line of its own (line_pad: 72 bytes past
	 * pages_tracked, which every insert writes), since every write fault
	 * reads it.
	 */
	__u64 line_pad[7];
	__u64 faults_pending;
};

/* meta.flags: max_pages was asked for (tracker load --max-pages): never grown */
#define TANDEM_TRK_META_PAGES_SET	1U

#endif
