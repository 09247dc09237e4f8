// SPDX-License-Identifier: GPL-2.0
/*
 * count: a QEMU TCG plugin that counts the instructions the guest executes, all vCPUs
 * together, and those of them at kernel addresses apart, and prints both totals each
 * time the guest executes the marker instruction (scripts/bench/workloads/mark.c):
 *
 *   mark N insns TOTAL kernel KERNEL
 *
 * on QEMU's log (-d plugin -D FILE). make bench's whole-system section
 * (scripts/bench/whole.sh) takes instructions per unit of work from the difference of two
 * marks. Under -icount the guest clock counts instructions too, but when every vCPU is
 * idle it jumps to the next timer's deadline (sleep=off), so a guest-clock difference
 * also holds the idle time of a workload that waits (grace periods, sleeps, timers);
 * this count holds only instructions executed.
 *
 * Each translation block adds its length to the total when it starts (a call; QEMU
 * 10.0's per-vCPU inline counters, the cheaper way, abort a multi-CPU boot under -icount
 * with "Bad icount read" and a corrupted heap as the second CPU comes up), and to the
 * kernel's total too when its address is in the upper half (x86-64's kernel addresses):
 * with single=1 (one thread runs every vCPU, as under -icount) by plain adds, otherwise
 * by atomic ones.
 * A mark therefore counts the whole block that holds the marker: a few instructions, the
 * same for every mark.
 *
 * With map=FILE (the guest kernel's System.map), it also profiles: each block's
 * instructions go to the text symbol its first address falls in (its init text's too),
 * or to [user]; a block past the kernel's image (_end: modules, and ftrace's
 * trampolines) to its own address, @HEX, which the report maps to a module's symbol
 * from the sections the guest printed (the first 64 Ki such blocks; later ones to
 * [modules], with a line that says so). Where a function shares its address with a
 * marker of the linker's (__softirqentry_text_start), the function's name is taken. Each
 * mark is followed by every symbol that ran since the mark before, most first (top=N:
 * only the first N):
 *
 *   prof N COUNT SYMBOL
 *
 * A run bracketed by marks N-1 and N (as every measured run of the whole-system guest
 * is) has its profile in mark N's lines. Blocks rarely cross a symbol's end (a fall-
 * through into the next function), so a symbol's count is its own to a few instructions.
 *
 * Built by scripts/bench/whole.sh against qemu-plugin.h of the QEMU that runs it
 * (Debian's source package of that version) and glib's headers.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* xchg %bx,%bx: a no-op that compilers do not emit (Bochs' magic breakpoint). */
static const uint8_t marker[] = { 0x66, 0x87, 0xdb };

/*
 * Totals over all vCPUs. Under -icount QEMU runs the vCPUs in turn on one thread, and
 * single=1 says so: plain adds. Without it the adds are atomic, so that multi-threaded
 * TCG counts right too.
 */
static uint64_t all, kernel, marks;
static bool single;

/*
 * The profile (map=FILE): the text symbols sorted by address, then the blocks past
 * _end as they are first translated (up to MODULE_BLOCKS of them), their counts, and
 * the counts at the last mark. Entries 0 and 1 are [user] and [modules].
 */
struct sym {
	uint64_t addr;
	char *name;
};
#define MODULE_BLOCKS 65536
static struct sym *syms;
static uint64_t *counts, *at_mark;
static size_t nsyms, nkernel, top = SIZE_MAX;
static uint64_t end;
static GHashTable *module_blocks;	/* address -> entry + 1 */

/* Whether @name marks a place for the linker rather than names a function. */
static bool marker_name(const char *name)
{
	size_t n = strlen(name);

	return (!strncmp(name, "__", 2) && ((n > 6 && !strcmp(name + n - 6, "_start")) ||
					    (n > 4 && !strcmp(name + n - 4, "_end")))) ||
	       !strncmp(name, "__pi_", 5) || !strcmp(name, "_stext") || !strcmp(name, "_text") ||
	       !strcmp(name, "_sinittext");
}

/* By address, and at one address the markers first: the search takes the last. */
static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return marker_name(y->name) - marker_name(x->name);
}

/* Reads the text symbols of @path (System.map); false if it has none. */
static bool load_map(const char *path)
{
	FILE *f = fopen(path, "r");
	char name[512], type;
	uint64_t addr;
	size_t cap = 1024;

	if (!f)
		return false;
	syms = malloc(cap * sizeof(*syms));
	syms[0] = (struct sym){ 0, "[user]" };
	syms[1] = (struct sym){ 0, "[modules]" };
	nsyms = 2;
	while (fscanf(f, "%" SCNx64 " %c %511s", &addr, &type, name) == 3) {
		if (!strcmp(name, "_end"))
			end = addr;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (nsyms == cap)
			syms = realloc(syms, (cap *= 2) * sizeof(*syms));
		syms[nsyms++] = (struct sym){ addr, strdup(name) };
	}
	fclose(f);
	qsort(syms + 2, nsyms - 2, sizeof(*syms), by_addr);
	nkernel = nsyms;
	syms = realloc(syms, (nkernel + MODULE_BLOCKS) * sizeof(*syms));
	counts = calloc(nkernel + MODULE_BLOCKS, sizeof(*counts));
	at_mark = calloc(nkernel + MODULE_BLOCKS, sizeof(*at_mark));
	module_blocks = g_hash_table_new(g_int64_hash, g_int64_equal);
	return nsyms > 2 && end;
}

/*
 * The entry of a block at @pc past _end: its own, made at its first translation (under
 * -icount, on the one thread that runs every vCPU: scripts/bench/vm.sh allows no
 * profile without it).
 */
static size_t module_block(uint64_t pc)
{
	size_t i = GPOINTER_TO_SIZE(g_hash_table_lookup(module_blocks, &pc));
	char name[24];

	if (i)
		return i - 1;
	if (nsyms == nkernel + MODULE_BLOCKS) {
		static bool said;

		if (!said)
			qemu_plugin_outs("count: more than 65536 blocks past the kernel's image: "
					 "the rest count to [modules]\n");
		said = true;
		return 1;
	}
	snprintf(name, sizeof(name), "@%" PRIx64, pc);
	syms[nsyms] = (struct sym){ pc, strdup(name) };
	g_hash_table_insert(module_blocks, &syms[nsyms].addr, GSIZE_TO_POINTER(nsyms + 1));
	return nsyms++;
}

/* The entry of the symbol @pc falls in. */
static size_t sym_of(uint64_t pc)
{
	size_t lo = 2, hi = nkernel;

	if (!(pc >> 63))
		return 0;
	if (pc >= end)
		return module_block(pc);
	if (pc < syms[2].addr)
		return 1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int by_delta(const void *a, const void *b)
{
	uint64_t x = counts[*(const size_t *)a] - at_mark[*(const size_t *)a];
	uint64_t y = counts[*(const size_t *)b] - at_mark[*(const size_t *)b];

	return x > y ? -1 : x < y;
}

/* The top symbols since the last mark, as "prof N COUNT SYMBOL" lines, in one write. */
static void print_profile(uint64_t mark)
{
	size_t *ran = malloc(nsyms * sizeof(*ran)), n = 0, i;
	GString *out = g_string_new(NULL);

	for (i = 0; i < nsyms; i++)
		if (counts[i] != at_mark[i])
			ran[n++] = i;
	qsort(ran, n, sizeof(*ran), by_delta);
	for (i = 0; i < n && i < top; i++)
		g_string_append_printf(out, "prof %" PRIu64 " %" PRIu64 " %s\n", mark,
				       counts[ran[i]] - at_mark[ran[i]], syms[ran[i]].name);
	qemu_plugin_outs(out->str);
	g_string_free(out, TRUE);
	for (i = 0; i < nsyms; i++)
		at_mark[i] = counts[i];
	free(ran);
}

static void on_mark(unsigned int vcpu, void *udata)
{
	char line[96];
	uint64_t mark = __atomic_fetch_add(&marks, 1, __ATOMIC_RELAXED);

	snprintf(line, sizeof(line), "mark %" PRIu64 " insns %" PRIu64 " kernel %" PRIu64 "\n",
		 mark, __atomic_load_n(&all, __ATOMIC_RELAXED),
		 __atomic_load_n(&kernel, __ATOMIC_RELAXED));
	qemu_plugin_outs(line);
	if (counts)
		print_profile(mark);
}

/*
 * A block starts: @udata is its length shifted left once, the low bit set at a kernel
 * address. A block cut short (a fault inside it) counts whole: a few instructions a
 * fault.
 */
static void on_block(unsigned int vcpu, void *udata)
{
	uintptr_t v = (uintptr_t)udata;

	__atomic_fetch_add(&all, v >> 1, __ATOMIC_RELAXED);
	if (v & 1)
		__atomic_fetch_add(&kernel, v >> 1, __ATOMIC_RELAXED);
}

/*
 * The same with plain adds, where every vCPU runs on one thread (single=1: -icount,
 * which scripts/bench/vm.sh says): a locked add a block costs a boot about a third of
 * its host time.
 */
static void on_block_single(unsigned int vcpu, void *udata)
{
	uintptr_t v = (uintptr_t)udata;

	all += v >> 1;
	if (v & 1)
		kernel += v >> 1;
}

/*
 * The same when profiling: @udata's bits 16 and up are also the symbol's entry. Plain
 * adds: a profile needs single=1.
 */
static void on_block_profiled(unsigned int vcpu, void *udata)
{
	uintptr_t v = (uintptr_t)udata, n = (v >> 1) & 0x7fff;

	all += n;
	if (v & 1)
		kernel += n;
	counts[v >> 16] += n;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	uintptr_t v = (n << 1) | (qemu_plugin_tb_vaddr(tb) >> 63);

	if (counts)
		/* A block holds at most 512 instructions (TCG_MAX_INSNS). */
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block_profiled, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(v | sym_of(qemu_plugin_tb_vaddr(tb)) << 16));
	else
		qemu_plugin_register_vcpu_tb_exec_cb(tb, single ? on_block_single : on_block,
						     QEMU_PLUGIN_CB_NO_REGS, (void *)v);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint8_t bytes[sizeof(marker)];

		if (qemu_plugin_insn_size(insn) != sizeof(marker) ||
		    qemu_plugin_insn_data(insn, bytes, sizeof(bytes)) != sizeof(bytes) ||
		    memcmp(bytes, marker, sizeof(marker)))
			continue;
		qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

static void on_qemu_exit(qemu_plugin_id_t id, void *udata)
{
	char line[96];

	snprintf(line, sizeof(line), "exit insns %" PRIu64 " kernel %" PRIu64 "\n", all, kernel);
	qemu_plugin_outs(line);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "map=", 4)) {
			if (!load_map(argv[i] + 4)) {
				fprintf(stderr, "count: no text symbols and _end in %s\n", argv[i] + 4);
				return -1;
			}
		} else if (!strcmp(argv[i], "single=1")) {
			single = true;
		} else if (!strncmp(argv[i], "top=", 4)) {
			top = strtoul(argv[i] + 4, NULL, 10);
		} else {
			fprintf(stderr, "count: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	if (counts && !single) {
		fprintf(stderr, "count: map= needs single=1 (every vCPU on one thread)\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
