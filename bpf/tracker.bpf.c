// SPDX-License-Identifier: GPL-2.0
/*
 * Page-cache sharing tracker: per job and dataset, pages missed (inserted
 * into the page cache), read again by the job that loaded them (own hits),
 * read by another job (shared hits, with the loader), and evicted.
 *
 * Hot-path rule: an event on a file that is not a dataset file costs a few
 * loads and a test in the filter bitmap (no map lookup, no lock, no
 * allocation) and returns; what passes the filter pays the lookups in
 * tasks (is the process in a job) and files (is this a dataset file).
 *
 * Several programs implement each access hook; the loader
 * (ctl/tracker/load.c) keeps exactly one per hook with
 * bpf_program__set_autoload() from its attach table.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "tracker.h"
#include "core_fixes.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define PAGE_SHIFT_4K	12
/*
 * Bound on pages handled per event: a single read() of up to 4 GiB. Larger
 * ranges are cut and the rest counted in range_capped, never silently.
 */
#define MAX_RANGE_PAGES	(1U << 20)
#define MAX_FOLIO_PAGES	(1U << 18)	/* 1 GiB folio: larger than any kernel makes */

#include "tracker_files.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);		/* tgid */
	__type(value, __u32);		/* job id */
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct tandem_trk_job);
} jobs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct tandem_trk_dataset);
} datasets SEC(".maps");

/*
 * Per-CPU maps cost max_entries x possible CPUs when preallocated; these
 * allocate an entry the first time a (job, dataset) pair is seen instead,
 * which happens on dataset events only.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct tandem_trk_ckey);
	__type(value, struct tandem_trk_counts);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct tandem_trk_mkey);
	__type(value, __u64);
} matrix SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tandem_trk_global);
} global SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tandem_trk_meta);
} meta SEC(".maps");

/*
 * Moved by tandemctl each time it writes `tasks` (tracker.h): a thread's
 * job, kept in its pending while this has not moved, needs no lookup in
 * `tasks` (job_of()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} taskgen SEC(".maps");

/*
 * The read tracepoint reports the whole requested range each time the read
 * loop refills its folio batch; what the read consumed is only known when
 * the thread's next read starts (or the thread exits). One pending range
 * per thread, in task storage so it dies with the thread; the later events
 * of the same read only move `cur`. A read that starts on the page after
 * the range (a sequential reader) extends it, up to MERGE_PAGES, so that
 * the states and counters are looked up once per range, not per read();
 * the batch flavour (6.1) keeps its batches the same way. The thread's
 * last dataset file is kept too (mapping, ino: file_id, dataset), so that
 * its next read of the same file needs no lookup in files.
 */
/*
 * 4 MiB: what a stats may not see yet, per thread, in its pending range and
 * again in its summed hits of whole files (pending.hit_n)
 */
#define MERGE_PAGES	1024
/*
 * a thread's summed hits are added at its next hit of a file this long after
 * the sum began: a job's counts lag its reads by about this much, not by up
 * to MERGE_PAGES (calibrate's warm run reads them while the job runs)
 */
#define HIT_NS		1000000ULL

#define TRK_VMA_CACHE	4

struct pending {
	__u64 first;		/* first page of the read */
	__u64 cur;		/* first page of its latest batch */
	__u64 last;		/* last page of the read, clamped to EOF */
	__u64 req_last;		/* last page as the tracepoint reported it */
	__u64 mapping;		/* the file of the read, and the last one seen */
	__u64 ino;
	__u32 file_id;
	__u32 dataset;
	__u32 valid;
	__u32 evicts;		/* the file's fileinfo.evicts when the range began */
	/*
	 * the job the pending range (and fault) began in, which it is counted
	 * for whatever `tasks` says when it is flushed: at a thread's exit its
	 * process may have left `tasks` already (another thread saw
	 * signal->live reach 0 first), or been moved to another job
	 */
	__u32 job;
	__u32 hit_job;
	/*
	 * The thread's job as `tasks` had it when taskgen was job_gen - 1
	 * (0: not looked up yet), so that a read looks `tasks` up only after
	 * tandemctl wrote it (job_of()). A process's job changes only there:
	 * a fork's child is a new thread, with no pending yet.
	 */
	__u32 cur_job;
	__u32 fault_job;	/* the job the pending fault (fault_valid) began in */
	__u64 job_gen;
	/*
	 * Shared or own hits of whole files (read_one_loader()) not yet added
	 * to counts and matrix: hit_n pages of hit_job that hit_loader loaded
	 * (its job + 1) in hit_dataset, summed over the thread's reads until
	 * one of the three changes or MERGE_PAGES, so that a reader of small
	 * files looks the counters up once a batch of files, not per file
	 * (hits_flush()).
	 */
	__u64 hit_n;
	__u64 hit_t0;		/* when the sum began (ns): flushed HIT_NS after */
	__u32 hit_loader;
	__u32 hit_dataset;
	/* a page fault on a page that was not cached yet (mmap, 6.18) */
	__u32 fault_valid;
	__u64 fault_index;
	__s64 fault_eof;
	__u32 fault_file_id;
	__u32 fault_dataset;
	/*
	 * The VMAs the thread's last faults were in, while the mm's mmap_lock
	 * sequence is vc_seq and the mm vc_mm (no VMA changed since, no exec):
	 * a fault in one of them needs no bpf_find_vma() (see vma_cached()).
	 * vc_n: entries filled.
	 */
	__u64 vc_mm;
	__u64 vc_start[TRK_VMA_CACHE], vc_end[TRK_VMA_CACHE];
	__u64 vc_pgoff[TRK_VMA_CACHE], vc_mapping[TRK_VMA_CACHE];
	__u32 vc_seq;
	__u32 vc_n, vc_next;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct pending);
} pending SEC(".maps");

/* kprobe fallback: filemap_get_pages() arguments from entry to return */
struct get_pages_args {
	__u64 iocb;
	__u64 arg;
	__u64 fbatch;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);		/* pid_tgid */
	__type(value, struct get_pages_args);
} get_pages_entry SEC(".maps");

/* entry 0 of a one-entry array MAP (value TYPE): its FIELD += N, atomically */
#define MAP0_ADD(map, type, field, n)					\
	do {								\
		__u32 zero = 0;						\
		type *v = bpf_map_lookup_elem(&(map), &zero);		\
		if (v)							\
			__sync_fetch_and_add(&v->field, (n));		\
	} while (0)

/* this CPU's copy of a tracker-wide event counter: += N */
#define GLOBAL_INC(field, n)	MAP0_ADD(global, struct tandem_trk_global, field, n)
/* meta's gauges (pages_tracked, faults_pending), shared by every CPU: += N */
#define META_ADD(field, n)	MAP0_ADD(meta, struct tandem_trk_meta, field, n)

/* meta.faults_pending now; 1 (look) when the map cannot tell */
static __always_inline __u64 faults_pending(void)
{
	__u32 zero = 0;
	struct tandem_trk_meta *m = bpf_map_lookup_elem(&meta, &zero);

	return m ? *(volatile __u64 *)&m->faults_pending : 1;
}


static __always_inline __u32 current_job(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 *job = bpf_map_lookup_elem(&tasks, &tgid);

	return job ? *job : 0;
}

/*
 * The thread's job, from P when `tasks` has not been written since P took
 * it (taskgen), else current_job() kept in P. taskgen is read before
 * `tasks`, and tandemctl moves it after writing `tasks`: a thread that
 * reads the new generation finds the new entry (x86 keeps loads in order;
 * a weakly ordered CPU may keep the old job until the next write).
 */
static __always_inline __u32 job_of(struct pending *p)
{
	__u32 zero = 0, job;
	__u64 *g, gen;

	if (!p)
		return current_job();
	g = bpf_map_lookup_elem(&taskgen, &zero);
	if (!g)
		return current_job();
	gen = *(volatile __u64 *)g + 1;
	if (p->job_gen == gen)
		return p->cur_job;
	barrier();
	job = current_job();
	p->cur_job = job;
	p->job_gen = gen;
	return job;
}

/* index of the last page that exists in the file now, or -1 for empty */
static __always_inline __s64 eof_page(struct address_space *mapping)
{
	__s64 size = BPF_CORE_READ(mapping, host, i_size);

	return size > 0 ? (size - 1) >> PAGE_SHIFT_4K : -1;
}

static __always_inline struct tandem_trk_counts *counts_of(__u32 job, __u32 dataset)
{
	struct tandem_trk_ckey key = { .job = job, .dataset = dataset };
	struct tandem_trk_counts *c, zero = {};

	c = bpf_map_lookup_elem(&counts, &key);
	if (c)
		return c;
	/* first event of this (job, dataset) */
	if (bpf_map_update_elem(&counts, &key, &zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&counts, &key)) {
		GLOBAL_INC(counter_full, 1);
		return NULL;
	}
	return bpf_map_lookup_elem(&counts, &key);
}

static __always_inline void matrix_add(__u32 reader, __u32 loader,
				       __u32 dataset, __u64 n)
{
	struct tandem_trk_mkey key = {
		.reader = reader, .loader = loader, .dataset = dataset,
	};
	__u64 *v, zero = 0;

	v = bpf_map_lookup_elem(&matrix, &key);
	if (!v) {
		bpf_map_update_elem(&matrix, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&matrix, &key);
	}
	if (v)
		__sync_fetch_and_add(v, n);
	else
		GLOBAL_INC(counter_full, 1);
}

#include "tracker_state.bpf.h"
#include "tracker_access.bpf.h"

/* ---- insert and evict: a word per page (tracker_state.bpf.h) ---- */

SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(trk_tp_insert, struct folio *folio)
{
	return on_insert(folio);
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(trk_tp_evict, struct folio *folio)
{
	return on_evict(folio);
}

/* ---- read(), tracepoint flavour (6.18): requested ranges ---- */

/* a read range begins: what its flush checks against (see fileinfo) */
static __always_inline void pending_begin(struct pending *p, __u32 job)
{
	struct tandem_trk_fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &p->file_id);

	p->evicts = fi ? fi->evicts : 0;
	p->job = job;
}

/* the thread's summed hits of whole files to counts and matrix (see pending) */
static __always_inline void hits_flush(struct pending *p)
{
	struct tandem_trk_counts *c;
	__u64 n = p->hit_n;

	if (!n)
		return;
	p->hit_n = 0;
	if (p->hit_loader != p->hit_job + 1)
		matrix_add(p->hit_job, p->hit_loader - 1, p->hit_dataset, n);
	c = counts_of(p->hit_job, p->hit_dataset);
	if (c)
		__sync_fetch_and_add(p->hit_loader == p->hit_job + 1 ? &c->own_hit :
				     &c->shared_hit, n);
}

/*
 * A read of a file one other job loaded entirely (fileinfo.loader), with no
 * eviction of the file since the range began: every page of it is a shared
 * hit of that job, so it is counted without the walk. The result is the
 * walk's: the walk would find the loader's state at every page. Otherwise
 * (false), the walk counts it. The hits are summed in the thread's pending
 * (hits_flush() at its exit, or when the reader, loader or dataset changes).
 */
static __always_inline bool read_one_loader(struct pending *p, __u32 job)
{
	struct tandem_trk_fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &p->file_id);
	__u32 loader;
	__u64 n, now;

	if (!fi || p->last < p->first || p->last >> 32)
		return false;
	loader = fi->loader;
	if (loader == LOADER_UNSET || loader == LOADER_MIXED || fi->evicts != p->evicts)
		return false;
	n = p->last - p->first + 1;
	if (n > MAX_RANGE_PAGES)
		return false;
	/* the loader's own pages: own hits once none of the file is fresh */
	if (loader == job + 1 && fi->fresh)
		return false;
	if (p->hit_n && (p->hit_job != job || p->hit_loader != loader ||
			 p->hit_dataset != p->dataset))
		hits_flush(p);
	now = bpf_ktime_get_ns();
	if (!p->hit_n)
		p->hit_t0 = now;
	p->hit_job = job;
	p->hit_loader = loader;
	p->hit_dataset = p->dataset;
	p->hit_n += n;
	if (p->hit_n >= MERGE_PAGES || now - p->hit_t0 >= HIT_NS)
		hits_flush(p);
	return true;
}

static __always_inline void pending_flush(struct pending *p, __u32 job)
{
	if (p->valid && job && !read_one_loader(p, job))
		account(job, p->file_id, p->dataset, p->first, p->last, 0);
	p->valid = 0;
}

/*
 * The read goes on: the same request again (its pages are counted when it
 * is over), or the next read of the file right after it (one range).
 * True when p took it.
 */
static __always_inline bool read_continues(struct pending *p, struct address_space *mapping,
					   __u64 ino, unsigned long index,
					   unsigned long last_index)
{
	__s64 size;

	if (!p || !p->valid || p->mapping != (__u64)mapping || p->ino != ino)
		return false;
	/* the same read continuing: its pages are counted when it is over */
	if (p->req_last == last_index && index > p->cur && index <= p->last + 1) {
		p->cur = index;
		return true;
	}
	/* the next read of the file, right after it: one range */
	if (index == p->last + 1 && p->last - p->first < MERGE_PAGES) {
		size = mapping->host->i_size;
		if (size > 0 && index <= (__u64)(size - 1) >> PAGE_SHIFT_4K) {
			p->cur = index;
			p->req_last = last_index;
			p->last = (size - 1) >> PAGE_SHIFT_4K;
			if (last_index < p->last)
				p->last = last_index;
			return true;
		}
	}
	return false;
}

/* A new read of the file: the previous one is flushed, this one pending. */
static __always_inline void read_begin(struct pending *p, __u32 job,
				       struct address_space *mapping, __u64 ino,
				       __u32 file_id, __u32 dataset, unsigned long index,
				       unsigned long last_index)
{
	__s64 size;

	/* a new read: the previous one is complete */
	pending_flush(p, p->job);
	p->mapping = (__u64)mapping;
	p->ino = ino;
	p->file_id = file_id;
	p->dataset = dataset;
	size = mapping->host->i_size;
	if (size <= 0 || index > (__u64)(size - 1) >> PAGE_SHIFT_4K)
		return;
	p->first = index;
	p->cur = index;
	p->req_last = last_index;
	p->last = (size - 1) >> PAGE_SHIFT_4K;
	if (last_index < p->last)
		p->last = last_index;
	pending_begin(p, job);
	p->valid = 1;
}

SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(trk_tp_read, struct address_space *mapping, unsigned long index,
	     unsigned long last_index)
{
	struct tandem_trk_file_key key = {};
	struct task_struct *task;
	struct tandem_trk_file fv, *f = &fv;
	struct pending *p;
	__u32 job, file_id, dataset;

	if (!file_key_btf(mapping, &key))
		return 0;
	task = bpf_get_current_task_btf();
	p = bpf_task_storage_get(&pending, task, NULL, 0);
	if (read_continues(p, mapping, key.ino, index, last_index))
		return 0;
	job = job_of(p);
	if (!job)
		return 0;
	if (p && p->mapping == (__u64)mapping && p->ino == key.ino) {
		file_id = p->file_id;
		dataset = p->dataset;
	} else {
		if (!file_find(&key, f))
			return 0;
		file_id = f->file_id;
		dataset = f->dataset;
	}
	if (!p) {
		p = bpf_task_storage_get(&pending, task, NULL,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!p) {
			GLOBAL_INC(pending_alloc_failed, 1);
			return 0;
		}
	}
	read_begin(p, job, mapping, key.ino, file_id, dataset, index, last_index);
	return 0;
}

/* ---- read(), batch flavour (6.1): the folios filemap_get_pages() found ---- */

/*
 * A copy of the batch's folio pointers, per CPU: off the stack, which
 * 6.1's verifier counts together with bpf_loop's callback frame (512 B).
 */
struct folio_copy {
	struct folio *folios[32];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct folio_copy);
} folio_copy SEC(".maps");

/*
 * The pages [*lo, *hi] of the batch within the read [first, last]; false
 * when there are none.
 */
static __always_inline bool batch_range(struct folio_batch *fbatch, __u64 first, __u64 last,
					__u64 *lo, __u64 *hi)
{
	struct folio *head, *tail;
	struct folio_copy *fc;
	unsigned int nr, size;
	__u32 zero = 0;

	nr = BPF_CORE_READ(fbatch, nr);
	if (!nr)
		return false;
	/*
	 * The batch is contiguous: first folio's start to last folio's end.
	 * Copied (folio_copy) so that indexing needs no arithmetic on a
	 * kernel pointer; its size (15 folios in 6.1, 31 in 6.18) relocates.
	 */
	fc = bpf_map_lookup_elem(&folio_copy, &zero);
	if (!fc)
		return false;
	size = bpf_core_field_size(fbatch->folios);
	if (size > sizeof(fc->folios))
		size = sizeof(fc->folios);
	if (nr > size / sizeof(fc->folios[0]))
		return false;
	if (bpf_probe_read_kernel(fc->folios, size, &fbatch->folios))
		return false;
	head = fc->folios[0];
	tail = fc->folios[(nr - 1) & 31];
	*lo = BPF_CORE_READ(head, index);
	*hi = BPF_CORE_READ(tail, index) + tandem_folio_nr_pages(tail) - 1;
	if (*lo < first)
		*lo = first;
	if (*hi > last)
		*hi = last;
	return *hi >= *lo;
}

/*
 * The batch's pages [lo, hi] of f, read by job: pending (P, the thread's,
 * or NULL when it has none yet), one range with the one before.
 */
static __always_inline void batch_pending(struct pending *p, const struct tandem_trk_file *f,
					  __u32 job, __u64 lo, __u64 hi)
{
	if (!p)
		p = bpf_task_storage_get(&pending, bpf_get_current_task_btf(), NULL,
					 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		GLOBAL_INC(pending_alloc_failed, 1);
		account(job, f->file_id, f->dataset, lo, hi, 0);
		return;
	}
	/* the batch right after the pending range: one range (see pending) */
	if (p->valid && p->file_id == f->file_id && lo == p->last + 1 &&
	    p->last - p->first < MERGE_PAGES) {
		p->last = hi;
		return;
	}
	pending_flush(p, p->job);
	p->file_id = f->file_id;
	p->dataset = f->dataset;
	p->first = lo;
	p->last = hi;
	pending_begin(p, job);
	p->valid = 1;
}

static __always_inline void on_get_pages(struct kiocb *iocb, __u64 arg,
					 struct folio_batch *fbatch)
{
	struct tandem_trk_file_key key = {};
	struct address_space *mapping;
	struct tandem_trk_file fv, *f = &fv;
	__u64 pos, count, lo, hi;
	struct pending *p;
	__u32 job;

	mapping = BPF_CORE_READ(iocb, ki_filp, f_mapping);
	if (!file_key(mapping, &key))
		return;
	p = bpf_task_storage_get(&pending, bpf_get_current_task_btf(), NULL, 0);
	job = job_of(p);
	if (!job)
		return;
	if (!file_find(&key, f))
		return;
	pos = BPF_CORE_READ(iocb, ki_pos);
	count = tandem_get_pages_count(arg);
	if (!count)
		return;
	if (!batch_range(fbatch, pos >> PAGE_SHIFT_4K, (pos + count - 1) >> PAGE_SHIFT_4K,
			 &lo, &hi))
		return;
	batch_pending(p, f, job, lo, hi);
}

SEC("fexit/filemap_get_pages")
int BPF_PROG(trk_fexit_read, struct kiocb *iocb, __u64 arg,
	     struct folio_batch *fbatch)
{
	on_get_pages(iocb, arg, fbatch);
	return 0;
}

SEC("kprobe/filemap_get_pages")
int BPF_KPROBE(trk_kprobe_read, struct kiocb *iocb, __u64 arg,
	       struct folio_batch *fbatch)
{
	struct get_pages_args a = {
		.iocb = (__u64)iocb, .arg = arg, .fbatch = (__u64)fbatch,
	};
	__u64 id = bpf_get_current_pid_tgid();

	if (!current_job())
		return 0;
	bpf_map_update_elem(&get_pages_entry, &id, &a, BPF_ANY);
	return 0;
}

SEC("kretprobe/filemap_get_pages")
int BPF_KRETPROBE(trk_kretprobe_read)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct get_pages_args *a = bpf_map_lookup_elem(&get_pages_entry, &id);
	struct get_pages_args copy;

	if (!a)
		return 0;
	copy = *a;
	bpf_map_delete_elem(&get_pages_entry, &id);
	on_get_pages((struct kiocb *)copy.iocb, copy.arg,
		     (struct folio_batch *)copy.fbatch);
	return 0;
}

/* ---- mmap, tracepoint flavour (6.18): fault-around windows and faults ---- */

/*
 * Who mapped a page: tgid and mm together, since a freed mm_struct is soon
 * reused by another process and a tgid survives exec. Counting each page
 * once per mapper is what a page-table entry is; the price is that a
 * process that unmaps a file and maps it again is not counted again.
 */
static __always_inline __u64 mapping_stamp(void)
{
	__u64 mm = (__u64)BPF_CORE_READ(bpf_get_current_task_btf(), mm);
	__u64 tgid = bpf_get_current_pid_tgid() >> 32;

	return (tgid << 32) | ((mm >> 6) & 0xffffffffULL) | 1;
}

/*
 * 6.18 maps whole large folios, beyond the fault-around window the
 * tracepoint reports (and a PMD-sized folio without any filemap
 * tracepoint), so a mapped range is widened to the folios at its ends, as
 * their pages' words recorded them when they were inserted (folios are
 * naturally aligned: the folio of 2^k pages holding page i starts at i
 * rounded down to 2^k). A folio the kernel split since keeps its old size
 * in the words: the range is then wider than what was mapped.
 */
static __always_inline __u64 folio_mask(__u32 file_id, __u64 idx)
{
	__u64 s = page_state(file_id, idx);
	__u32 k = (s >> TANDEM_TRK_PG_ORDER_SHIFT) & TANDEM_TRK_PG_ORDER_MASK;

	return PG_IS_CACHED(s) ? (1ULL << (k & 31)) - 1 : 0;
}

static __always_inline void map_folios(__u32 job, const struct tandem_trk_file *f,
				       __u64 first, __u64 last, __s64 eof)
{
	if (eof < 0 || (first | last) >> 32)
		return;
	if (last > (__u64)eof)
		last = eof;
	first &= ~folio_mask(f->file_id, first);
	last |= folio_mask(f->file_id, last);
	if (last > (__u64)eof)
		last = eof;
	/* pages without a state in the window were not cached: not mapped */
	account(job, f->file_id, f->dataset, first, last, mapping_stamp());
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(trk_tp_map_pages, struct address_space *mapping,
	     unsigned long start, unsigned long end)
{
	struct tandem_trk_file_key key = {};
	struct tandem_trk_file fv, *f = &fv;
	__u32 job;

	if (!file_key_btf(mapping, &key))
		return 0;
	job = current_job();
	if (!job)
		return 0;
	if (file_find(&key, f))
		map_folios(job, f, start, end, eof_page(mapping));
	return 0;
}

/* the VMA of a fault (kept small: the stack of 6.12's verifier is tight here) */
struct fault_ctx {
	struct address_space *mapping;
	__u64 start, end, pgoff;
};

static long fault_vma(struct task_struct *task, struct vm_area_struct *vma,
		      void *data)
{
	struct fault_ctx *fc = data;
	struct file *file = BPF_CORE_READ(vma, vm_file);

	fc->start = BPF_CORE_READ(vma, vm_start);
	fc->end = BPF_CORE_READ(vma, vm_end);
	fc->pgoff = BPF_CORE_READ(vma, vm_pgoff);
	fc->mapping = file ? BPF_CORE_READ(file, f_mapping) : NULL;
	return 0;
}

/*
 * A fault on a page not yet cached: its folio counted once it is, for the
 * job the fault was taken in (as a pending read range is).
 */
static __always_inline void fault_flush(struct pending *p)
{
	struct tandem_trk_file f = { .file_id = p->fault_file_id,
				     .dataset = p->fault_dataset };

	if (!p->fault_valid)
		return;
	if (p->fault_job)
		map_folios(p->fault_job, &f, p->fault_index, p->fault_index, p->fault_eof);
	p->fault_valid = 0;
	META_ADD(faults_pending, -1);
}

/*
 * The mm's mmap_lock sequence (a seqcount since 6.13: odd while a writer
 * changes VMAs, moved on by every change); false where the kernel has none
 * of that kind or a writer is at work, and then nothing is cached.
 */
static __always_inline bool mm_lock_seq(struct task_struct *task, __u32 *seq, __u64 *mmp)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);

	if (!bpf_core_field_exists(mm->mm_lock_seq.sequence) || !mm)
		return false;
	*seq = BPF_CORE_READ(mm, mm_lock_seq.sequence);
	*mmp = (__u64)mm;
	return !(*seq & 1);
}

/*
 * The VMA of addr from the thread's cache, valid while no VMA of the mm
 * changed (the sequence is the one the entries were filled under): only
 * the VMA is cached, never whether its file is in a dataset, which is
 * looked up again on every fault. bpf_find_vma() from this tracepoint,
 * whose IRQs are off, releases mmap_lock through an irq_work: about 13 us
 * a fault on this host's VM, and a training job takes 10^4-10^5 faults on
 * its anonymous memory and libraries (Documentation/tracker.md).
 */
static __always_inline bool vma_cached(struct pending *p, __u32 seq, __u64 mm,
				       __u64 addr, struct fault_ctx *fc)
{
	if (!p || p->vc_seq != seq || p->vc_mm != mm)
		return false;
#pragma unroll
	for (int i = 0; i < TRK_VMA_CACHE; i++) {
		if (i < p->vc_n && addr >= p->vc_start[i] && addr < p->vc_end[i]) {
			fc->start = p->vc_start[i];
			fc->end = p->vc_end[i];
			fc->pgoff = p->vc_pgoff[i];
			fc->mapping = (struct address_space *)p->vc_mapping[i];
			return true;
		}
	}
	return false;
}

static __always_inline void vma_cache_put(struct pending *p, __u32 seq, __u64 mm,
					  const struct fault_ctx *fc)
{
	__u32 i;

	if (p->vc_seq != seq || p->vc_mm != mm) {
		p->vc_seq = seq;
		p->vc_mm = mm;
		p->vc_n = 0;
		p->vc_next = 0;
	}
	i = p->vc_next % TRK_VMA_CACHE;
	p->vc_start[i] = fc->start;
	p->vc_end[i] = fc->end;
	p->vc_pgoff[i] = fc->pgoff;
	p->vc_mapping[i] = (__u64)fc->mapping;
	p->vc_next = i + 1;
	if (p->vc_n < TRK_VMA_CACHE)
		p->vc_n++;
}

/*
 * A fault at INDEX of dataset file F: the folio there counted now when it
 * is cached, else at the thread's next fault or exit (fault_flush()).
 */
static __always_inline void fault_at(struct task_struct *task, __u32 job,
				     const struct tandem_trk_file *f, __u64 index,
				     __s64 eof)
{
	struct pending *p;

	if (!(index >> 32) && PG_IS_CACHED(page_state(f->file_id, index))) {
		map_folios(job, f, index, index, eof);
		return;
	}
	p = bpf_task_storage_get(&pending, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		GLOBAL_INC(pending_alloc_failed, 1);
		return;
	}
	p->fault_file_id = f->file_id;
	p->fault_dataset = f->dataset;
	p->fault_index = index;
	p->fault_eof = eof;
	p->fault_job = job;
	if (!p->fault_valid)
		META_ADD(faults_pending, 1);
	p->fault_valid = 1;
}

/* x86 page-fault error code (arch/x86/include/asm/trap_pf.h) */
#define TRK_PF_PROT	(1UL << 0)	/* the page was present */
#define TRK_PF_WRITE	(1UL << 1)
#define TRK_PF_INSTR	(1UL << 4)	/* an instruction fetch */

/*
 * Every user page fault: the faulting page's folio is what gets mapped when
 * neither tracepoint of the file reports it, which is a read fault whose
 * page fault-around maps as a PMD (filemap_map_pmd(): no tracepoint). Only
 * read faults on a page not present need the VMA here, and only in a job:
 *   - a write fault on a file page not present goes through filemap_fault()
 *     (do_cow_fault(), do_shared_fault(): no fault-around), which
 *     trk_tp_filemap_fault sees with the file and index;
 *   - a fault on a present page (PROT: copy-on-write, write-protect) maps
 *     no new page: the page was mapped, and counted, when it became present;
 *   - an instruction fetch maps the code of a program or library; a dataset
 *     file mapped executable and run from is not counted (fault-around's
 *     PMD case only; its other pages are still seen by map_pages).
 * Those were most faults, and each cost a VMA lookup (bpf_find_vma(), with
 * IRQs off: its irq_work) before anything knew it was on no dataset file:
 * `cat` takes one write fault per file, on the buffer it allocates
 * (Documentation/tracker.md, "At small-file scale"). They now cost a
 * task-storage lookup, for the thread's pending fault.
 */
SEC("tp_btf/page_fault_user")
int BPF_PROG(trk_tp_page_fault, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fault_ctx fc = {};
	struct tandem_trk_file fv, *f = &fv;
	struct pending *p;
	__u32 job, seq = 0;
	__u64 mm = 0, index;
	bool seq_ok;

	if (error_code & (TRK_PF_PROT | TRK_PF_WRITE | TRK_PF_INSTR)) {
		/* no thread has one: nothing to look up (cat: a fault a file) */
		if (!faults_pending())
			return 0;
		p = bpf_task_storage_get(&pending, task, NULL, 0);
		if (p)
			fault_flush(p);
		return 0;
	}
	job = current_job();
	if (!job)
		return 0;
	p = bpf_task_storage_get(&pending, task, NULL, 0);
	if (p)
		fault_flush(p);
	seq_ok = mm_lock_seq(task, &seq, &mm);
	if (seq_ok && vma_cached(p, seq, mm, address, &fc)) {
		GLOBAL_INC(fault_vma_cached, 1);
	} else {
		if (bpf_find_vma(task, address, fault_vma, &fc, 0))
			return 0;
		if (seq_ok) {
			if (!p)
				p = bpf_task_storage_get(&pending, task, NULL,
							 BPF_LOCAL_STORAGE_GET_F_CREATE);
			if (p)
				vma_cache_put(p, seq, mm, &fc);
		}
	}
	if (!fc.mapping)
		return 0;
	index = fc.pgoff + ((address - fc.start) >> PAGE_SHIFT_4K);
	if (lookup_file(fc.mapping, f))
		fault_at(task, job, f, index, eof_page(fc.mapping));
	return 0;
}

/*
 * filemap_fault(): a fault on a file page that fault-around did not map
 * (not cached, locked, not up to date), and every write fault on a file
 * page not present (copy-on-write of a private mapping, a shared mapping).
 * The file and index come with it, so no VMA is looked up. A read fault
 * gets here after trk_tp_page_fault saw it: counting the page twice is
 * harmless, the second finds it mapped by the same process.
 */
SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(trk_tp_filemap_fault, struct address_space *mapping, unsigned long index)
{
	struct tandem_trk_file_key key = {};
	struct tandem_trk_file fv, *f = &fv;
	__u32 job;

	if (!file_key_btf(mapping, &key))
		return 0;
	job = current_job();
	if (!job)
		return 0;
	if (file_find(&key, f))
		fault_at(bpf_get_current_task_btf(), job, f, index, eof_page(mapping));
	return 0;
}

/* ---- mmap, per page-table entry: do_set_pte() (6.1), set_pte_range() (6.5+) ---- */

static __always_inline void on_set_pte(struct page *page)
{
	struct address_space *mapping;
	struct tandem_trk_file_key key = {};
	struct tandem_trk_file fv, *f = &fv;
	__u32 job;
	__u64 index;

	if (!page)
		return;
	mapping = BPF_CORE_READ(page, mapping);
	/* anonymous (COW) pages carry PAGE_MAPPING_ANON in bit 0 */
	if ((__u64)mapping & 1)
		return;
	if (!file_key(mapping, &key))
		return;
	job = current_job();
	if (!job)
		return;
	if (!file_find(&key, f))
		return;
	index = tandem_page_index(page);
	account(job, f->file_id, f->dataset, index, index, 0);
}

SEC("fentry/do_set_pte")
int BPF_PROG(trk_fentry_set_pte, struct vm_fault *vmf, struct page *page)
{
	on_set_pte(page);
	return 0;
}

SEC("kprobe/do_set_pte")
int BPF_KPROBE(trk_kprobe_set_pte, struct vm_fault *vmf, struct page *page)
{
	on_set_pte(page);
	return 0;
}

/*
 * 6.5+ (6.12 here): do_set_pte() became set_pte_range(), which maps nr
 * pages of one folio at once (core_fixes.bpf.h).
 */
static __always_inline void on_set_pte_range(struct folio *folio, struct page *page,
					     unsigned int nr)
{
	struct address_space *mapping;
	struct tandem_trk_file fv, *f = &fv;
	__u32 job = current_job();
	__u64 index;

	if (!job || !folio || !page || !nr)
		return;
	mapping = BPF_CORE_READ(folio, mapping);
	if ((__u64)mapping & 1)
		return;
	if (!lookup_file(mapping, f))
		return;
	index = tandem_folio_page_index(folio, page);
	account(job, f->file_id, f->dataset, index, index + nr - 1, 0);
}

SEC("fentry/set_pte_range")
int BPF_PROG(trk_fentry_set_pte_range, struct vm_fault *vmf, struct folio *folio,
	     struct page *page, unsigned int nr, unsigned long addr)
{
	on_set_pte_range(folio, page, nr);
	return 0;
}

SEC("kprobe/set_pte_range")
int BPF_KPROBE(trk_kprobe_set_pte_range, struct vm_fault *vmf, struct folio *folio,
	       struct page *page, unsigned int nr)
{
	on_set_pte_range(folio, page, nr);
	return 0;
}

/* ---- jobs: process trees ---- */

SEC("tp_btf/sched_process_fork")
int BPF_PROG(trk_tp_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 *job;

	if (ptgid == ctgid)	/* a thread: counts as its process */
		return 0;
	job = bpf_map_lookup_elem(&tasks, &ptgid);
	if (!job)
		return 0;
	if (bpf_map_update_elem(&tasks, &ctgid, job, BPF_ANY))
		GLOBAL_INC(task_full, 1);
	return 0;
}

/*
 * The thread's pending fault, in a program of its own on the same
 * tracepoint: the two flushes inlined in one program are more than the
 * verifier's 1M instructions.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(trk_tp_exit_fault, struct task_struct *task)
{
	struct pending *p = bpf_task_storage_get(&pending, bpf_get_current_task_btf(),
						 NULL, 0);

	if (p)
		fault_flush(p);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(trk_tp_exit, struct task_struct *task)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct pending *p;
	__u32 tgid, job;
	int live;

	job = current_job();
	p = bpf_task_storage_get(&pending, cur, NULL, 0);
	/* the process may be out of `tasks` already (see pending) */
	if (p) {
		pending_flush(p, p->job);
		hits_flush(p);
	}
	if (!job)
		return 0;
	live = BPF_CORE_READ(task, signal, live.counter);
	if (live)
		return 0;
	tgid = BPF_CORE_READ(task, tgid);
	/* two threads may both see live == 0; deleting twice is harmless */
	bpf_map_delete_elem(&tasks, &tgid);
	return 0;
}
