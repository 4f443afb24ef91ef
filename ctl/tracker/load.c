// SPDX-License-Identifier: GPL-2.0
/*
 * Load the tracker's BPF programs, choosing each hook's attach point from
 * one table, and pin maps and links so that the tracker outlives this
 * process.
 *
 * Each hook lists its candidates best first: a tracepoint where the kernel
 * has one, then fentry/fexit, then a kprobe. The first one whose attach
 * points all exist on the running kernel is kept; the programs of the others
 * are not loaded (bpf_program__set_autoload(false)). On this project's
 * kernels that gives:
 *   6.18 (no fentry, no kprobes): every hook on a tracepoint;
 *   6.1 (Debian): insert/evict/fork/exit on tracepoints, read on
 *        fexit/filemap_get_pages, mmap on fentry/do_set_pte;
 *   6.12 (Debian): every hook on a tracepoint; the mmap fallbacks are
 *        fentry/kprobe on set_pte_range (do_set_pte's name since 6.5).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "lib/util.h"
#include "tracker/tracker.h"
#include "tracker/internal.h"
#include "tracker.skel.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

#define MAX_CANDIDATES	5
#define MAX_PROGS	3

struct candidate {
	enum tracker_kind kind;
	/* programs kept together; each one's section names its attach point */
	const char *progs[MAX_PROGS];
};

struct hook {
	const char *name;
	struct candidate cand[MAX_CANDIDATES];
};

/* The attach table: the one place where attach points are chosen. */
static const struct hook hooks[TANDEM_TRK_NR_HOOKS] = {
	[TANDEM_TRK_HOOK_INSERT] = { "insert", {
		{ TRACKER_KIND_TRACEPOINT, { "trk_tp_insert" } },
	} },
	[TANDEM_TRK_HOOK_EVICT] = { "evict", {
		{ TRACKER_KIND_TRACEPOINT, { "trk_tp_evict" } },
	} },
	[TANDEM_TRK_HOOK_FORK] = { "fork", {
		{ TRACKER_KIND_TRACEPOINT, { "trk_tp_fork" } },
	} },
	[TANDEM_TRK_HOOK_EXIT] = { "exit", {
		{ TRACKER_KIND_TRACEPOINT, { "trk_tp_exit", "trk_tp_exit_fault" } },
	} },
	[TANDEM_TRK_HOOK_READ] = { "read", {
		{ TRACKER_KIND_TRACEPOINT, { "trk_tp_read" } },
		{ TRACKER_KIND_FENTRY, { "trk_fexit_read" } },
		{ TRACKER_KIND_KPROBE, { "trk_kprobe_read", "trk_kretprobe_read" } },
	} },
	[TANDEM_TRK_HOOK_MMAP] = { "mmap", {
		{ TRACKER_KIND_TRACEPOINT, { "trk_tp_map_pages", "trk_tp_page_fault",
					      "trk_tp_filemap_fault" } },
		{ TRACKER_KIND_FENTRY, { "trk_fentry_set_pte" } },
		{ TRACKER_KIND_FENTRY, { "trk_fentry_set_pte_range" } },
		{ TRACKER_KIND_KPROBE, { "trk_kprobe_set_pte" } },
		{ TRACKER_KIND_KPROBE, { "trk_kprobe_set_pte_range" } },
	} },
};

struct probe_env {
	struct btf *vmlinux;
	int fentry_ok;		/* -1 unknown, 0 no, 1 yes */
	int kprobe_ok;
};

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_WARN)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int libbpf_verbose(enum libbpf_print_level level __attribute__((unused)),
			  const char *fmt, va_list ap)
{
	return vfprintf(stderr, fmt, ap);
}

int tracker_kind_parse(const char *s, enum tracker_kind *kind)
{
	static const char *const names[] = {
		[TRACKER_KIND_ANY] = "auto",
		[TRACKER_KIND_TRACEPOINT] = "tracepoint",
		[TRACKER_KIND_FENTRY] = "fentry",
		[TRACKER_KIND_KPROBE] = "kprobe",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*kind = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Can a trivial fentry program attach to FUNC btf_id? (6.18 here: no) */
static bool fentry_works(int btf_id)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 },	/* r0 = 0 */
		{ .code = 0x95 },				/* exit */
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = btf_id);
	int prog, link;

	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "trk_probe", "GPL",
			     insns, 2, &o);
	if (prog < 0)
		return false;
	link = bpf_raw_tracepoint_open(NULL, prog);
	if (link >= 0)
		close(link);
	close(prog);
	return link >= 0;
}

static bool kallsyms_has(const char *sym)
{
	char line[512], name[256], type;
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %c %255s", &type, name) == 2 &&
		    (type == 't' || type == 'T') && !strcmp(name, sym))
			found = true;
	}
	fclose(f);
	return found;
}

/* Does the running kernel offer the attach point SEC names? */
static bool attach_point_exists(struct probe_env *env, const char *sec)
{
	const char *slash = strchr(sec, '/');
	const char *target = slash ? slash + 1 : "";
	char tname[128];
	int id;

	if (!strncmp(sec, "tp_btf/", 7)) {
		snprintf(tname, sizeof(tname), "btf_trace_%s", target);
		return btf__find_by_name_kind(env->vmlinux, tname, BTF_KIND_TYPEDEF) > 0;
	}
	if (!strncmp(sec, "fentry/", 7) || !strncmp(sec, "fexit/", 6)) {
		id = btf__find_by_name_kind(env->vmlinux, target, BTF_KIND_FUNC);
		if (id <= 0)
			return false;
		/* the trampoline machinery is per kernel, not per function */
		if (env->fentry_ok < 0)
			env->fentry_ok = fentry_works(id);
		return env->fentry_ok;
	}
	if (!strncmp(sec, "kprobe/", 7) || !strncmp(sec, "kretprobe/", 10)) {
		if (env->kprobe_ok < 0)
			env->kprobe_ok = !access("/sys/bus/event_source/devices/kprobe/type", R_OK);
		return env->kprobe_ok && kallsyms_has(target);
	}
	return false;
}

static bool candidate_available(struct tracker_bpf *skel, struct probe_env *env,
				const struct candidate *c)
{
	for (int i = 0; i < MAX_PROGS && c->progs[i]; i++) {
		struct bpf_program *p;

		p = bpf_object__find_program_by_name(skel->obj, c->progs[i]);
		if (!p || !attach_point_exists(env, bpf_program__section_name(p)))
			return false;
	}
	return true;
}

static void candidate_describe(struct tracker_bpf *skel, const struct candidate *c,
			       char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < MAX_PROGS && c->progs[i] && off < len; i++) {
		struct bpf_program *p;

		p = bpf_object__find_program_by_name(skel->obj, c->progs[i]);
		off += snprintf(buf + off, len - off, "%s%s", i ? "+" : "",
				bpf_program__section_name(p));
	}
}

/* index of the candidate to keep for hook h, or -ENOENT */
static int choose(struct tracker_bpf *skel, struct probe_env *env,
		  const struct hook *h, enum tracker_kind prefer)
{
	int i;

	for (i = 0; prefer && i < MAX_CANDIDATES && h->cand[i].progs[0]; i++)
		if (h->cand[i].kind == prefer &&
		    candidate_available(skel, env, &h->cand[i]))
			return i;
	for (i = 0; i < MAX_CANDIDATES && h->cand[i].progs[0]; i++)
		if (candidate_available(skel, env, &h->cand[i]))
			return i;
	return -ENOENT;
}

static void set_autoload(struct tracker_bpf *skel, const struct candidate *c,
			 bool on)
{
	for (int i = 0; i < MAX_PROGS && c->progs[i]; i++) {
		struct bpf_program *p;

		p = bpf_object__find_program_by_name(skel->obj, c->progs[i]);
		if (p)
			bpf_program__set_autoload(p, on);
	}
}

/* Was filemap_get_pages()'s 2nd parameter a struct iov_iter * (<= 6.3)? */
static bool get_pages_takes_iter(const struct btf *btf)
{
	const struct btf_type *t;
	const struct btf_param *p;
	int id = btf__find_by_name_kind(btf, "filemap_get_pages", BTF_KIND_FUNC);

	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 2)
		return false;
	p = btf_params(t);
	t = btf__type_by_id(btf, p[1].type);
	return t && btf_is_ptr(t);
}

/* pick every hook's attach point; fills meta->attach[] */
static int choose_all(struct tracker_bpf *skel, enum tracker_kind prefer,
		      struct tandem_trk_meta *meta)
{
	struct probe_env env = { .fentry_ok = -1, .kprobe_ok = -1 };
	int err = 0;

	env.vmlinux = btf__load_vmlinux_btf();
	if (!env.vmlinux) {
		ctl_err("tracker: cannot read the kernel's BTF (/sys/kernel/btf/vmlinux): %s",
			strerror(errno));
		return -errno ? -errno : -ENOENT;
	}
	for (int h = 0; h < TANDEM_TRK_NR_HOOKS; h++) {
		int pick = choose(skel, &env, &hooks[h], prefer);

		for (int i = 0; i < MAX_CANDIDATES && hooks[h].cand[i].progs[0]; i++)
			set_autoload(skel, &hooks[h].cand[i], i == pick);
		if (pick < 0) {
			ctl_err("tracker: no attach point for '%s' on this kernel",
				hooks[h].name);
			err = -EOPNOTSUPP;
			break;
		}
		candidate_describe(skel, &hooks[h].cand[pick], meta->attach[h],
				   sizeof(meta->attach[h]));
		if (h == TANDEM_TRK_HOOK_READ && hooks[h].cand[pick].kind != TRACKER_KIND_TRACEPOINT)
			meta->read_mode = TANDEM_TRK_READ_BATCH;
		else if (h == TANDEM_TRK_HOOK_READ)
			meta->read_mode = TANDEM_TRK_READ_TP_RANGE;
	}
	skel->rodata->get_pages_arg_is_iter = get_pages_takes_iter(env.vmlinux);
	btf__free(env.vmlinux);
	return err;
}

/* bpffs at /sys/fs/bpf, mounted if missing (a bare VM or container) */
static int ensure_bpffs(void)
{
	struct statfs st;

	if (!statfs("/sys/fs/bpf", &st) && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mkdir("/sys/fs/bpf", 0700) && errno != EEXIST)
		return -errno;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		ctl_err("tracker: cannot mount bpffs on /sys/fs/bpf: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int pin_maps(struct tracker_bpf *skel, const char *dir)
{
	char path[PATH_MAX];
	int err;

	for (size_t i = 0; i < tracker_npinned_maps; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(skel->obj, tracker_pinned_maps[i]);

		if (snprintf(path, sizeof(path), "%s/%s", dir, tracker_pinned_maps[i]) >= (int)sizeof(path))
			err = -ENAMETOOLONG;
		else
			err = m ? bpf_map__pin(m, path) : -ENOENT;
		if (err) {
			ctl_err("tracker: cannot pin map %s at %s: %s", tracker_pinned_maps[i],
				path, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* attach every loaded program and pin its link as DIR/link_<prog> */
static int attach_and_pin(struct tracker_bpf *skel, const char *dir)
{
	struct bpf_program *p;
	char path[PATH_MAX];
	int err;

	bpf_object__for_each_program(p, skel->obj) {
		struct bpf_link *link;

		if (!bpf_program__autoload(p))
			continue;
		if (snprintf(path, sizeof(path), "%s/link_%s", dir, bpf_program__name(p)) >=
		    (int)sizeof(path))
			return -ENAMETOOLONG;
		link = bpf_program__attach(p);
		if (!link) {
			err = -errno;
			ctl_err("tracker: cannot attach %s (%s): %s", bpf_program__name(p),
				bpf_program__section_name(p), strerror(-err));
			return err;
		}
		err = bpf_link__pin(link, path);
		/* the pin holds the attachment; this process's fd can go */
		bpf_link__destroy(link);
		if (err) {
			ctl_err("tracker: cannot pin link %s: %s", path, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int write_meta(struct tracker_bpf *skel, struct tandem_trk_meta *meta)
{
	__u32 zero = 0;

	meta->version = TANDEM_TRK_VERSION;
	meta->max_pages = bpf_map__max_entries(skel->maps.pages);
	meta->max_files = bpf_map__max_entries(skel->maps.fileinfo) - 1;
	meta->load_time = time(NULL);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.meta), &zero, meta, 0))
		return -errno;
	return 0;
}

static int open_and_size(struct tracker_bpf **skelp, const struct tracker_load_opts *o)
{
	struct tracker_bpf *skel;
	int err;

	skel = tracker_bpf__open();
	if (!skel) {
		err = -errno;
		ctl_err("tracker: cannot open the BPF object: %s", strerror(-err));
		return err;
	}
	uint32_t max_files = o->max_files ? o->max_files : TRACKER_DEFAULT_MAX_FILES;
	uint32_t max_pages = o->max_pages ? o->max_pages : TRACKER_DEFAULT_MAX_PAGES;

	if (max_files > TRACKER_MAX_FILES) {
		ctl_err("tracker: at most %u files", TRACKER_MAX_FILES);
		tracker_bpf__destroy(skel);
		return -E2BIG;
	}
	/* a word per page of the registered files (bpf/tracker.h) */
	err = bpf_map__set_max_entries(skel->maps.pages, max_pages);
	/* the file table, load factor <= 3/4 (bpf/tracker.h) */
	skel->rodata->file_slots = tandem_trk_file_slots(max_files);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.files, skel->rodata->file_slots);
	/* per-file dataset, page words and state, indexed by file_id (1..max_files) */
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.fileinfo, max_files + 1);
	/* the files filter: tandemctl's tracker_filter_add() sizes it the same way */
	skel->rodata->filter_words = tandem_trk_filter_words(max_files);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.filter, skel->rodata->filter_words);
	if (err) {
		tracker_bpf__destroy(skel);
		return err;
	}
	*skelp = skel;
	return 0;
}

int tracker_load_objects(const struct tracker_load_opts *o, struct tracker_bpf **skelp,
			 struct tandem_trk_meta *meta)
{
	struct tracker_bpf *skel;
	int err;

	libbpf_set_print(o->verbose ? libbpf_verbose : libbpf_quiet);
	err = ensure_bpffs();
	if (err)
		return err;
	err = open_and_size(&skel, o);
	if (err)
		return err;
	meta->flags = o->pages_set ? TANDEM_TRK_META_PAGES_SET : 0;
	err = choose_all(skel, o->prefer, meta);
	if (!err) {
		err = tracker_bpf__load(skel);
		if (err)
			ctl_err("tracker: the kernel refused the BPF programs: %s%s", strerror(-err),
				err == -EPERM ? " (needs root; on kernels without memcg-accounted BPF memory, a higher RLIMIT_MEMLOCK)" : "");
	}
	if (err) {
		tracker_bpf__destroy(skel);
		return err;
	}
	*skelp = skel;
	return 0;
}

int tracker_load_pin_maps(struct tracker_bpf *skel, const char *stage)
{
	int err = mkdir_p(stage);

	if (err) {
		ctl_err("tracker: cannot create %s: %s", stage, strerror(-err));
		return err;
	}
	return pin_maps(skel, stage);
}

int tracker_load_attach(struct tracker_bpf *skel, const char *stage,
			struct tandem_trk_meta *meta)
{
	int err = write_meta(skel, meta);

	return err ?: attach_and_pin(skel, stage);
}

void tracker_load_destroy(struct tracker_bpf *skel)
{
	tracker_bpf__destroy(skel);
}

int tracker_load(const struct tracker_load_opts *o)
{
	struct tandem_trk_meta meta = {};
	struct tracker_bpf *skel;
	const char *dir = tracker_dir();
	char stage[PATH_MAX];
	int err;

	if (tracker_is_loaded()) {
		ctl_err("tracker: already loaded at %s ('tandemctl tracker unload' first)", dir);
		return -EEXIST;
	}
	err = tracker_load_objects(o, &skel, &meta);
	if (err)
		return err;
	if (tracker_remove_partial(dir))
		ctl_err("tracker: removed what an interrupted load left at %s", dir);
	/* pinned in a staging directory, renamed to DIR when complete */
	tracker_staging_dir(dir, stage, sizeof(stage));
	err = tracker_load_pin_maps(skel, stage);
	if (!err)
		err = tracker_load_attach(skel, stage, &meta);
	if (!err && rename(stage, dir)) {
		err = -errno;
		if (err == -EEXIST || err == -ENOTEMPTY)
			ctl_err("tracker: another load finished first at %s", dir);
		else
			ctl_err("tracker: cannot rename %s to %s: %s", stage, dir, strerror(-err));
	}
	if (err)
		goto err_unpin;
	tracker_bpf__destroy(skel);
	return 0;

err_unpin:
	tracker_unpin_all(stage);
	if (!strcmp(dir, TRACKER_DEFAULT_DIR))
		rmdir(TRACKER_DEFAULT_PARENT);	/* load made it; it stays if not empty */
	tracker_bpf__destroy(skel);
	return err;
}

/* N plus a quarter, at least MIN, at most MAX */
static uint32_t with_margin(uint64_t n, uint32_t min, uint32_t max)
{
	uint64_t want = n + n / 4;

	return want < min ? min : want > max ? max : (uint32_t)want;
}

void tracker_size_for(uint64_t files, uint64_t pages, struct tracker_load_opts *o)
{
	o->max_files = with_margin(files, TRACKER_DEFAULT_MAX_FILES, TRACKER_MAX_FILES);
	o->max_pages = with_margin(pages, TRACKER_DEFAULT_MAX_PAGES, TRACKER_MAX_PAGES);
}

int tracker_ensure_loaded(bool *loaded)
{
	struct tracker_load_opts o = {};

	*loaded = false;
	if (tracker_is_loaded())
		return 0;
	*loaded = true;
	return tracker_load(&o);
}
