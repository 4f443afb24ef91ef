/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracker's file table and the lookups every hook starts with: the
 * filter (is (dev, ino) perhaps a dataset file?), the inode's key, and the
 * open-addressed table that gives its file_id and dataset (tracker.h; "The
 * file table" in Documentation/tracker.md). Included by tracker.bpf.c
 * before its other maps: it needs only its own.
 */
#ifndef TANDEM_TRACKER_FILES_BPF_H
#define TANDEM_TRACKER_FILES_BPF_H

/* the file table (tracker.h): written by tandemctl in place, read here */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 21846);	/* set by the loader: tandem_trk_file_slots(max_files) */
	__type(key, __u32);
	__type(value, struct tandem_trk_slot);
} files SEC(".maps");

/* files' max_entries, set by the loader */
const volatile __u32 file_slots = 21846;

/*
 * per file_id (1..max_files): the file's dataset, and what the programs
 * keep of it (bpf/tracker_state.bpf.h). Mmapable: tandemctl reads and
 * writes the datasets in place.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 16385);	/* set by the loader: max_files + 1 */
	__type(key, __u32);
	__type(value, struct tandem_trk_fileinfo);
} fileinfo SEC(".maps");

/* see tracker.h; sized by the loader, bits set by tandemctl */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} filter SEC(".maps");

/* filter's max_entries, a power of two, set by the loader */
const volatile __u32 filter_words = 64;

/*
 * Is (dev, ino) perhaps a dataset file? An array lookup the verifier turns
 * into a few instructions, and a bit test: the filter every hook applies
 * before it looks anything up.
 */
static __always_inline bool file_maybe(const struct tandem_trk_file_key *key)
{
	__u64 h = tandem_trk_filter_hash(key->dev, key->ino);
	__u32 w = TANDEM_TRK_FILTER_WORD(h, filter_words);
	__u64 *word = bpf_map_lookup_elem(&filter, &w);

	return word && ((*word >> TANDEM_TRK_FILTER_BIT(h)) & 1);
}

/* the inode's key, and whether it passes the filter */
static __always_inline bool file_key(struct address_space *mapping,
				     struct tandem_trk_file_key *key)
{
	struct inode *host;

	if (!mapping)
		return false;
	host = BPF_CORE_READ(mapping, host);
	if (!host)
		return false;
	key->dev = BPF_CORE_READ(host, i_sb, s_dev);
	key->ino = BPF_CORE_READ(host, i_ino);
	return file_maybe(key);
}

/*
 * The same for tracepoint and fentry programs, whose arguments are BTF
 * pointers: plain loads (the verifier guards them) instead of helper calls.
 * This is the check every read of every file pays, so it is kept cheap.
 */
static __always_inline bool file_key_btf(struct address_space *mapping,
					 struct tandem_trk_file_key *key)
{
	struct inode *host;

	if (!mapping)
		return false;
	host = mapping->host;
	if (!host)
		return false;
	key->dev = host->i_sb->s_dev;
	key->ino = host->i_ino;
	return file_maybe(key);
}

/* a lookup in the file table: the key, the slot it is at, what it found */
struct probe_ctx {
	__u64 dev;
	__u64 ino;
	__u32 i;
	__u32 id;
};

static long probe_slot(__u32 n, void *data)
{
	struct probe_ctx *pc = data;
	struct tandem_trk_slot *s = bpf_map_lookup_elem(&files, &pc->i);
	__u32 id;

	if (!s)
		return 1;
	id = *(volatile __u32 *)&s->file_id;
	if (!id)
		return 1;
	/* the id first: a slot being written shows 0 there (tracker.h) */
	barrier();
	if (s->ino == pc->ino && s->dev == pc->dev) {
		pc->id = id;
		return 1;
	}
	pc->i = pc->i + 1 < file_slots ? pc->i + 1 : 0;
	return 0;
}

/*
 * The file_id of (dev, ino) in the file table, 0 when it has none: its
 * slot is at most TANDEM_TRK_FILE_PROBES - 1 past its home (tandemctl sees
 * to it), the first empty slot ends the search. One bpf_loop() step per
 * slot, so the verifier checks one step, not 512; and a global function,
 * checked once, not in every program and path that looks a file up. It
 * returns the id (6.1 lets no global function return a map value).
 */
__noinline __u32 trk_file_find(__u64 dev, __u64 ino)
{
	struct probe_ctx pc = {
		.dev = dev, .ino = ino,
		.i = tandem_trk_slot_home(tandem_trk_filter_hash(dev, ino), file_slots),
	};

	bpf_loop(TANDEM_TRK_FILE_PROBES, probe_slot, &pc, 0);
	return pc.id;
}

/*
 * The file_id of (dev, ino): its home slot looked at here, inlined, since
 * most files are there (the table is at most 3/4 full); the probe loop
 * only for the others.
 */
static __always_inline __u32 file_id_of(__u64 dev, __u64 ino)
{
	__u32 i = tandem_trk_slot_home(tandem_trk_filter_hash(dev, ino), file_slots);
	struct tandem_trk_slot *s = bpf_map_lookup_elem(&files, &i);
	__u32 id;

	if (!s)
		return 0;
	id = *(volatile __u32 *)&s->file_id;
	if (!id)
		return 0;	/* an empty home: no file there, nor past it */
	barrier();
	if (s->ino == ino && s->dev == dev)
		return id;
	return trk_file_find(dev, ino);
}

/* KEY's file in F: false when it is no dataset's (or not published yet) */
static __always_inline bool file_find(const struct tandem_trk_file_key *key,
				      struct tandem_trk_file *f)
{
	struct tandem_trk_fileinfo *fi;
	__u32 id = file_id_of(key->dev, key->ino);

	if (!id)
		return false;
	fi = bpf_map_lookup_elem(&fileinfo, &id);
	if (!fi)
		return false;
	f->file_id = id;
	f->dataset = fi->dataset;
	return f->dataset != 0;
}

static __always_inline bool lookup_file(struct address_space *mapping, struct tandem_trk_file *f)
{
	struct tandem_trk_file_key key = {};

	return file_key(mapping, &key) && file_find(&key, f);
}

static __always_inline bool lookup_file_btf(struct address_space *mapping,
					    struct tandem_trk_file *f)
{
	struct tandem_trk_file_key key = {};

	return file_key_btf(mapping, &key) && file_find(&key, f);
}

#endif
