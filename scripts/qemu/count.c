// SPDX-License-Identifier: GPL-2.0
/*
 * count: a QEMU TCG plugin that counts the instructions the guest executes, all vCPUs
 * together, and those of them at kernel addresses apart, and prints both totals each
 * time the guest executes the marker instruction (scripts/workloads/mark.c):
 *
 *   mark N insns TOTAL kernel KERNEL
 *
 * on QEMU's log (-d plugin -D FILE). make bench's whole-system section
 * (scripts/bench_whole.sh) takes instructions per unit of work from the difference of two
 * marks. Under -icount the guest clock counts instructions too, but when every vCPU is
 * idle it jumps to the next timer's deadline (sleep=off), so a guest-clock difference
 * also holds the idle time of a workload that waits (grace periods, sleeps, timers);
 * this count holds only instructions executed.
 *
 * Each translation block adds its length to the total when it starts (a call; QEMU
 * 10.0's per-vCPU inline counters, the cheaper way, abort a multi-CPU boot under -icount
 * with "Bad icount read" and a corrupted heap as the second CPU comes up), and to the
 * kernel's total too when its address is in the upper half (x86-64's kernel addresses).
 * A mark therefore counts the whole block that holds the marker: a few instructions, the
 * same for every mark.
 *
 * Built by scripts/bench_whole.sh against qemu-plugin.h of the QEMU that runs it
 * (Debian's source package of that version) and glib's headers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* xchg %bx,%bx: a no-op that compilers do not emit (Bochs' magic breakpoint). */
static const uint8_t marker[] = { 0x66, 0x87, 0xdb };

/*
 * Totals over all vCPUs. Under -icount QEMU runs the vCPUs in turn on one thread; the
 * adds are atomic all the same, so that a run without it (multi-threaded TCG) counts
 * right too.
 */
static uint64_t all, kernel, marks;

static void on_mark(unsigned int vcpu, void *udata)
{
	char line[96];

	snprintf(line, sizeof(line), "mark %" PRIu64 " insns %" PRIu64 " kernel %" PRIu64 "\n",
		 __atomic_fetch_add(&marks, 1, __ATOMIC_RELAXED),
		 __atomic_load_n(&all, __ATOMIC_RELAXED), __atomic_load_n(&kernel, __ATOMIC_RELAXED));
	qemu_plugin_outs(line);
}

/*
 * A block starts: @udata is its length shifted left once, the low bit set at a kernel
 * address. A block cut short (a fault inside it) counts whole: a few instructions a fault.
 */
static void on_block(unsigned int vcpu, void *udata)
{
	uintptr_t v = (uintptr_t)udata;

	__atomic_fetch_add(&all, v >> 1, __ATOMIC_RELAXED);
	if (v & 1)
		__atomic_fetch_add(&kernel, v >> 1, __ATOMIC_RELAXED);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	uintptr_t v = (n << 1) | (qemu_plugin_tb_vaddr(tb) >> 63);

	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, (void *)v);
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
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
	return 0;
}
