// SPDX-License-Identifier: GPL-2.0
/*
 * Page-cache sharing tracker: per job and dataset, pages missed (inserted
 * into the page cache), read again by the job that loaded them (own hits),
 * read by another job (shared hits, with the loader), and evicted.
 *
 * Hot-path rule: an event on a file that is not a dataset file costs at
 * most two hash lookups (tasks: is the process in a job; files: is this a
 * dataset file) and returns; no lock, no allocation.
 *
 * Several programs implement each access hook; the loader
 * (ctl/tracker_load.c) keeps exactly one per hook with
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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);	/* set by the loader (--max-files) */
	__type(key, struct tandem_trk_file_key);
	__type(value, struct tandem_trk_file);
} files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 131072);	/* set by the loader (--max-pages) */
	__type(key, __u64);
	__type(value, struct tandem_trk_page);
} pages SEC(".maps");

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
 * The read tracepoint reports the whole requested range each time the read
 * loop refills its folio batch; what the previous batch consumed is only
 * known when the next event of the same read arrives (or the thread exits).
 * One pending range per thread, in task storage so it dies with the thread.
 */
struct pending {
	__u64 first;		/* first page not yet counted */
	__u64 last;		/* last page of the read, clamped to EOF */
	__u64 req_last;		/* last page as the tracepoint reported it */
	__u32 file_id;
	__u32 dataset;
	__u32 valid;
	/* a page fault on a page that was not cached yet (mmap, 6.18) */
	__u32 fault_valid;
	__u64 fault_index;
	__s64 fault_eof;
	__u32 fault_file_id;
	__u32 fault_dataset;
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

#define GLOBAL_INC(field, n)						\
	do {								\
		__u32 zero = 0;						\
		struct tandem_trk_global *g;				\
		g = bpf_map_lookup_elem(&global, &zero);		\
		if (g)							\
			__sync_fetch_and_add(&g->field, (n));		\
	} while (0)

static __always_inline __u32 current_job(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 *job = bpf_map_lookup_elem(&tasks, &tgid);

	return job ? *job : 0;
}

static __always_inline struct tandem_trk_file *
lookup_file(struct address_space *mapping)
{
	struct tandem_trk_file_key key = {};
	struct inode *host;

	if (!mapping)
		return NULL;
	host = BPF_CORE_READ(mapping, host);
	if (!host)
		return NULL;
	key.dev = BPF_CORE_READ(host, i_sb, s_dev);
	key.ino = BPF_CORE_READ(host, i_ino);
	return bpf_map_lookup_elem(&files, &key);
}

/*
 * The same for tracepoint and fentry programs, whose arguments are BTF
 * pointers: plain loads (the verifier guards them) instead of helper calls.
 * This is the check every read of every file pays, so it is kept cheap.
 */
static __always_inline struct tandem_trk_file *
lookup_file_btf(struct address_space *mapping)
{
	struct tandem_trk_file_key key = {};
	struct inode *host;

	if (!mapping)
		return NULL;
	host = mapping->host;
	if (!host)
		return NULL;
	key.dev = host->i_sb->s_dev;
	key.ino = host->i_ino;
	return bpf_map_lookup_elem(&files, &key);
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

/* ---- insert and evict: per page of the folio ---- */

/*
 * Loop contexts for bpf_loop(). Since 6.7 the verifier walks a callback as
 * a loop until its states converge, so no branch may depend on a counter
 * kept here (that would make it precise and every iteration a new state):
 * the counters are only ever added, unconditionally.
 */
struct folio_ctx {
	__u64 key;		/* state key of the folio's first page */
	__u32 job;
	__u32 dataset;
	__u32 done;		/* insert: new states; evict: states removed */
	__u32 failed;		/* insert: states not stored */
	__u32 nr;		/* pages in the folio */
	__u32 pad;
};

static long insert_one(__u32 i, void *data)
{
	struct folio_ctx *fc = data;
	struct tandem_trk_page st = {
		.loader = fc->job, .flags = TANDEM_TRK_PAGE_FRESH,
		.folio_first = (__u32)fc->key, .folio_nr = fc->nr,
	};
	__u64 key = fc->key + i;

	/* a state left by a racing delete is replaced, not counted twice */
	if (!bpf_map_update_elem(&pages, &key, &st, BPF_NOEXIST))
		fc->done++;
	else if (bpf_map_update_elem(&pages, &key, &st, BPF_ANY))
		fc->failed++;
	return 0;
}

static long evict_one(__u32 i, void *data)
{
	struct folio_ctx *fc = data;
	__u64 key = fc->key + i;
	struct tandem_trk_page *st;
	struct tandem_trk_counts *c;
	__u32 loader = 0;

	st = bpf_map_lookup_elem(&pages, &key);
	if (st) {
		loader = st->loader;
		if (!bpf_map_delete_elem(&pages, &key))
			fc->done++;
	}
	c = counts_of(loader, fc->dataset);
	if (c)
		__sync_fetch_and_add(&c->evict, 1);
	return 0;
}

/* folio's file, first state key and page count; 0 when not a dataset page */
static __always_inline __u32 folio_target(struct folio *folio,
					  struct folio_ctx *fc)
{
	struct tandem_trk_file *f = lookup_file_btf(folio->mapping);
	__u64 index;
	__u32 nr;

	if (!f)
		return 0;
	index = BPF_CORE_READ(folio, index);
	nr = tandem_folio_nr_pages(folio);
	if (nr > MAX_FOLIO_PAGES)
		nr = MAX_FOLIO_PAGES;
	if ((index + nr) >> 32) {
		GLOBAL_INC(index_too_big, nr);
		return 0;
	}
	fc->key = ((__u64)f->file_id << 32) | index;
	fc->dataset = f->dataset;
	fc->nr = nr;
	return nr;
}

static __always_inline int on_insert(struct folio *folio)
{
	struct folio_ctx fc = {};
	struct tandem_trk_counts *c;
	__u32 nr = folio_target(folio, &fc);

	if (!nr)
		return 0;
	/* readahead runs in the reader's context: its job is the loader */
	fc.job = current_job();
	bpf_loop(nr, insert_one, &fc, 0);
	c = counts_of(fc.job, fc.dataset);
	if (c)
		__sync_fetch_and_add(&c->miss, nr);
	GLOBAL_INC(inserted, fc.done);
	GLOBAL_INC(insert_failed, fc.failed);
	return 0;
}

static __always_inline int on_evict(struct folio *folio)
{
	struct folio_ctx fc = {};
	__u32 nr = folio_target(folio, &fc);

	if (!nr)
		return 0;
	bpf_loop(nr, evict_one, &fc, 0);
	GLOBAL_INC(removed, fc.done);
	GLOBAL_INC(evict_unknown, nr - fc.done);
	return 0;
}

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

/* ---- accesses: a range of cached pages read or mapped by a job ---- */

struct access_ctx {
	__u64 base;		/* file_id << 32 */
	__u64 first;		/* first page of the range */
	__u64 next;		/* read_segment: first page not yet counted */
	__u64 last;		/* last page of the range */
	__u64 mapper;		/* mmap: mapping stamp for dedup; 0 for reads */
	__u32 job;
	__u32 dataset;
	__u32 first_access;
	__u32 own;
	__u32 shared;
	__u32 unknown;
	__u32 loader;		/* loader of the current run of shared hits */
	__u32 run;		/* its length: one matrix update per run */
};

static __always_inline void count_shared(struct access_ctx *ac, __u32 loader,
					 __u32 n)
{
	if (loader != ac->loader) {
		matrix_add(ac->job, ac->loader, ac->dataset, ac->run);
		ac->loader = loader;
		ac->run = 0;
	}
	ac->run += n;
	ac->shared += n;
}

/* one page of loader LOADER with state ST read or mapped by the job */
static __always_inline void count_page(struct access_ctx *ac,
				       struct tandem_trk_page *st)
{
	if (st->loader != ac->job) {
		count_shared(ac, st->loader, 1);
	} else if (st->flags & TANDEM_TRK_PAGE_FRESH) {
		/* the access that follows the job's own miss: not a hit */
		st->flags &= ~TANDEM_TRK_PAGE_FRESH;
		ac->first_access++;
	} else {
		ac->own++;
	}
}

/*
 * mmap: page by page. Pages without a state were not cached, so were not
 * mapped; a page this process mapped already is not counted again.
 */
static long map_page(__u32 i, void *data)
{
	struct access_ctx *ac = data;
	__u64 key = ac->base | (ac->first + i);
	struct tandem_trk_page *st;

	st = bpf_map_lookup_elem(&pages, &key);
	if (!st || st->mapper == ac->mapper)
		return 0;
	st->mapper = ac->mapper;
	count_page(ac, st);
	return 0;
}

/*
 * read(): every page of the range was copied from the cache, so a page
 * without a state was cached before tracking began (or lost its state to
 * the LRU). Cached reads are the hot path: a folio's pages share their
 * loader, so one lookup serves the whole part of a large folio in the
 * range when its first and last pages agree; pages still fresh, and folios
 * whose pages disagree, go page by page.
 */
static long read_segment(__u32 i, void *data)
{
	struct access_ctx *ac = data;
	struct tandem_trk_page *st, *end_st;
	__u64 idx = ac->next, end, key;

	if (idx > ac->last)
		return 1;
	key = ac->base | idx;
	st = bpf_map_lookup_elem(&pages, &key);
	if (!st) {
		ac->unknown++;
		count_shared(ac, 0, 1);
		ac->next = idx + 1;
		return 0;
	}
	end = (__u64)st->folio_first + st->folio_nr - 1;
	if (end < idx || end > ac->last)
		end = end < idx ? idx : ac->last;
	if (end > idx && !(st->flags & TANDEM_TRK_PAGE_FRESH)) {
		key = ac->base | end;
		end_st = bpf_map_lookup_elem(&pages, &key);
		if (!end_st || end_st->loader != st->loader || end_st->flags != st->flags)
			end = idx;
	} else {
		end = idx;
	}
	ac->next = end + 1;
	if (end == idx)
		count_page(ac, st);
	else if (st->loader != ac->job)
		count_shared(ac, st->loader, end - idx + 1);
	else
		ac->own += end - idx + 1;
	return 0;
}

static __always_inline void account(__u32 job, __u32 file_id, __u32 dataset,
				    __u64 first, __u64 last, __u64 mapper)
{
	struct access_ctx ac = {
		.job = job, .dataset = dataset, .mapper = mapper,
		.base = (__u64)file_id << 32, .first = first, .next = first,
	};
	struct tandem_trk_counts *c;
	__u64 n;

	if (last < first)
		return;
	if (last >> 32) {
		GLOBAL_INC(index_too_big, 1);
		return;
	}
	n = last - first + 1;
	if (n > MAX_RANGE_PAGES) {
		GLOBAL_INC(range_capped, n - MAX_RANGE_PAGES);
		n = MAX_RANGE_PAGES;
	}
	ac.last = first + n - 1;
	/* at most one iteration per page; read_segment stops early */
	if (mapper)
		bpf_loop(n, map_page, &ac, 0);
	else
		bpf_loop(n, read_segment, &ac, 0);
	/* the last run; an empty one adds 0 to the (job, 0) entry */
	matrix_add(job, ac.loader, dataset, ac.run);
	GLOBAL_INC(access_unknown, ac.unknown);
	c = counts_of(job, dataset);
	if (!c)
		return;
	__sync_fetch_and_add(&c->first_access, ac.first_access);
	__sync_fetch_and_add(&c->own_hit, ac.own);
	__sync_fetch_and_add(&c->shared_hit, ac.shared);
}

/* ---- read(), tracepoint flavour (6.18): requested ranges ---- */

static __always_inline void pending_flush(struct pending *p, __u32 job)
{
	if (p->valid && job)
		account(job, p->file_id, p->dataset, p->first, p->last, 0);
	p->valid = 0;
}

SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(trk_tp_read, struct address_space *mapping, unsigned long index,
	     unsigned long last_index)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct tandem_trk_file *f;
	struct pending *p;
	__u32 job = current_job();
	__s64 eof;

	if (!job)
		return 0;
	f = lookup_file_btf(mapping);
	if (!f)
		return 0;
	p = bpf_task_storage_get(&pending, task, NULL,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		GLOBAL_INC(pending_alloc_failed, 1);
		return 0;
	}
	/*
	 * The same read continuing: the previous batch ended where this one
	 * starts. Anything else: the previous read is complete.
	 */
	if (p->valid && p->file_id == f->file_id && p->req_last == last_index &&
	    index > p->first && index <= p->last + 1) {
		account(job, p->file_id, p->dataset, p->first, index - 1, 0);
		p->first = index;
		return 0;
	}
	pending_flush(p, job);
	eof = eof_page(mapping);
	if (eof < 0 || index > (__u64)eof)
		return 0;
	p->first = index;
	p->req_last = last_index;
	p->last = last_index < (__u64)eof ? last_index : (__u64)eof;
	p->file_id = f->file_id;
	p->dataset = f->dataset;
	p->valid = 1;
	return 0;
}

/* ---- read(), batch flavour (6.1): the folios filemap_get_pages() found ---- */

static __always_inline void on_get_pages(struct kiocb *iocb, __u64 arg,
					 struct folio_batch *fbatch)
{
	struct address_space *mapping;
	struct tandem_trk_file *f;
	struct folio *head, *tail;
	struct folio *folios[32] = {};
	__u64 pos, count, first, last, lo, hi;
	__u32 job = current_job();
	unsigned int nr, size;

	if (!job)
		return;
	mapping = BPF_CORE_READ(iocb, ki_filp, f_mapping);
	f = lookup_file(mapping);
	if (!f)
		return;
	nr = BPF_CORE_READ(fbatch, nr);
	if (!nr)
		return;
	pos = BPF_CORE_READ(iocb, ki_pos);
	count = tandem_get_pages_count(arg);
	if (!count)
		return;
	first = pos >> PAGE_SHIFT_4K;
	last = (pos + count - 1) >> PAGE_SHIFT_4K;
	/*
	 * The batch is contiguous: first folio's start to last folio's end.
	 * Copied to the stack so that indexing needs no arithmetic on a
	 * kernel pointer; its size (15 folios in 6.1, 31 in 6.18) relocates.
	 */
	size = bpf_core_field_size(fbatch->folios);
	if (size > sizeof(folios))
		size = sizeof(folios);
	if (nr > size / sizeof(folios[0]))
		return;
	if (bpf_probe_read_kernel(folios, size, &fbatch->folios))
		return;
	head = folios[0];
	tail = folios[(nr - 1) & 31];
	lo = BPF_CORE_READ(head, index);
	hi = BPF_CORE_READ(tail, index) + tandem_folio_nr_pages(tail) - 1;
	if (lo < first)
		lo = first;
	if (hi > last)
		hi = last;
	account(job, f->file_id, f->dataset, lo, hi, 0);
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
 * recorded when they were inserted.
 */
static __always_inline void map_folios(__u32 job, const struct tandem_trk_file *f,
				       __u64 first, __u64 last, __s64 eof)
{
	__u64 base = (__u64)f->file_id << 32;
	struct tandem_trk_page *st;
	__u64 key;

	if (eof < 0)
		return;
	if (last > (__u64)eof)
		last = eof;
	key = base | (first & 0xffffffffULL);
	st = bpf_map_lookup_elem(&pages, &key);
	if (st && st->folio_first < first && first - st->folio_first < MAX_FOLIO_PAGES)
		first = st->folio_first;
	key = base | (last & 0xffffffffULL);
	st = bpf_map_lookup_elem(&pages, &key);
	if (st && st->folio_nr <= MAX_FOLIO_PAGES &&
	    (__u64)st->folio_first + st->folio_nr - 1 > last)
		last = (__u64)st->folio_first + st->folio_nr - 1;
	if (last > (__u64)eof)
		last = eof;
	/* pages without a state in the window were not cached: not mapped */
	account(job, f->file_id, f->dataset, first, last, mapping_stamp());
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(trk_tp_map_pages, struct address_space *mapping,
	     unsigned long start, unsigned long end)
{
	struct tandem_trk_file *f;
	__u32 job = current_job();

	if (!job)
		return 0;
	f = lookup_file_btf(mapping);
	if (f)
		map_folios(job, f, start, end, eof_page(mapping));
	return 0;
}

struct fault_ctx {
	__u64 addr;
	__u64 index;
	struct address_space *mapping;
};

static long fault_vma(struct task_struct *task, struct vm_area_struct *vma,
		      void *data)
{
	struct fault_ctx *fc = data;
	struct file *file = BPF_CORE_READ(vma, vm_file);

	if (!file)
		return 0;
	fc->mapping = BPF_CORE_READ(file, f_mapping);
	fc->index = BPF_CORE_READ(vma, vm_pgoff) +
		    ((fc->addr - BPF_CORE_READ(vma, vm_start)) >> PAGE_SHIFT_4K);
	return 0;
}

/* a fault on a page not yet cached: count its folio once it is */
static __always_inline void fault_flush(struct pending *p, __u32 job)
{
	struct tandem_trk_file f = { .file_id = p->fault_file_id,
				     .dataset = p->fault_dataset };

	if (p->fault_valid && job)
		map_folios(job, &f, p->fault_index, p->fault_index, p->fault_eof);
	p->fault_valid = 0;
}

/*
 * Every user page fault of a job's process: the faulting page's folio is
 * what gets mapped when fault-around does not report it (PMD mappings,
 * the folio filemap_fault() returns).
 */
SEC("tp_btf/page_fault_user")
int BPF_PROG(trk_tp_page_fault, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fault_ctx fc = { .addr = address };
	struct tandem_trk_file *f;
	struct pending *p;
	__u32 job = current_job();
	__u64 key;

	if (!job)
		return 0;
	p = bpf_task_storage_get(&pending, task, NULL, 0);
	if (p)
		fault_flush(p, job);
	if (bpf_find_vma(task, address, fault_vma, &fc, 0) || !fc.mapping)
		return 0;
	f = lookup_file(fc.mapping);
	if (!f)
		return 0;
	key = ((__u64)f->file_id << 32) | (fc.index & 0xffffffffULL);
	if (bpf_map_lookup_elem(&pages, &key)) {
		map_folios(job, f, fc.index, fc.index, eof_page(fc.mapping));
		return 0;
	}
	p = bpf_task_storage_get(&pending, task, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		GLOBAL_INC(pending_alloc_failed, 1);
		return 0;
	}
	p->fault_file_id = f->file_id;
	p->fault_dataset = f->dataset;
	p->fault_index = fc.index;
	p->fault_eof = eof_page(fc.mapping);
	p->fault_valid = 1;
	return 0;
}

/* ---- mmap, per page-table entry: do_set_pte() (6.1), set_pte_range() (6.5+) ---- */

static __always_inline void on_set_pte(struct page *page)
{
	struct address_space *mapping;
	struct tandem_trk_file *f;
	__u32 job = current_job();
	__u64 index;

	if (!job || !page)
		return;
	mapping = BPF_CORE_READ(page, mapping);
	/* anonymous (COW) pages carry PAGE_MAPPING_ANON in bit 0 */
	if ((__u64)mapping & 1)
		return;
	f = lookup_file(mapping);
	if (!f)
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
	struct tandem_trk_file *f;
	__u32 job = current_job();
	__u64 index;

	if (!job || !folio || !page || !nr)
		return;
	mapping = BPF_CORE_READ(folio, mapping);
	if ((__u64)mapping & 1)
		return;
	f = lookup_file(mapping);
	if (!f)
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

SEC("tp_btf/sched_process_exit")
int BPF_PROG(trk_tp_exit, struct task_struct *task)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct pending *p;
	__u32 tgid, job;
	int live;

	job = current_job();
	if (!job)
		return 0;
	p = bpf_task_storage_get(&pending, cur, NULL, 0);
	if (p) {
		pending_flush(p, job);
		fault_flush(p, job);
	}
	live = BPF_CORE_READ(task, signal, live.counter);
	if (live)
		return 0;
	tgid = BPF_CORE_READ(task, tgid);
	/* two threads may both see live == 0; deleting twice is harmless */
	bpf_map_delete_elem(&tasks, &tgid);
	return 0;
}
