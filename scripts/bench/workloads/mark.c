// SPDX-License-Identifier: GPL-2.0
/*
 * mark: executes the marker instruction that scripts/bench/qemu/count.c (a QEMU plugin)
 * answers with the guest's instruction counts so far, and exits. No C library: a static
 * binary of a few instructions, so that a mark adds little to the runs it brackets (its
 * fork and exec are counted, the same for every run).
 *
 * Built by scripts/bench/vm.sh: gcc -static -nostdlib -O2 -o mark mark.c
 */
void _start(void);

void _start(void)
{
	/* xchg %bx,%bx, then exit(0). */
	__asm__ volatile("xchg %%bx, %%bx\n\t"
			 "mov $60, %%eax\n\t"
			 "xor %%edi, %%edi\n\t"
			 "syscall"
			 : : : "rax", "rdi", "rcx", "r11", "memory");
	__builtin_unreachable();
}
