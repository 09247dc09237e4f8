// SPDX-License-Identifier: GPL-2.0
/*
 * snapshot: the counters that scripts/bench/whole_guest.sh takes before and after every
 * run, one line each, for its delta(), which subtracts them.
 *
 *   snapshot [-r DIR] [-k "SUMMED ..." "PER_CACHE ..."]
 *
 * Always the kernel's own figures, as "- NAME VALUE": pgalloc (every zone's pgalloc_*),
 * pgfree and pgfault from /proc/vmstat, slab_kib and free_kib (Slab, MemFree) from
 * /proc/meminfo, ctxt from /proc/stat.
 *
 * With -r, rslub's, from its debugfs folder DIR if there is one: "CACHE COUNTER VALUE"
 * for every counter of every cache's stats file that is not 0 (a missing line is 0 to
 * delta()), and "CACHE page_bytes N" and "CACHE meta_bytes N" from its nodes file's
 * "bytes pages=N metadata=N" line.
 *
 * With -k, SLUB's own counters (CONFIG_SLUB_STATS) if the kernel has them: "-k COUNTER
 * SUM" for every counter of either list that it has, summed over its caches, and "-s
 * CACHE/COUNTER VALUE" for the counters of the second list, per cache, where not 0. A
 * cache is a directory of /sys/kernel/slab; its aliases, symbolic links to it, are left
 * out. A counter file reads "SUM C0=... C1=...": the first number is the cache's.
 *
 * One process, the same in every boot: a snapshot's process is work of its own (its exit
 * frees objects), which every boot's runs should inherit alike. A snapshot reads hundreds
 * of files, thousands on a SLUB_STATS kernel: busybox's awk and the shell took 150 to 200
 * million user-mode instructions for one, more than many runs they bracketed.
 *
 * Built by scripts/bench/vm.sh: gcc -O2 -static -Wall -o snapshot snapshot.c
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_COUNTERS 64

struct counter {
	const char *name;
	int per_cache;
	int seen;
	unsigned long long sum;
};

static struct counter counters[MAX_COUNTERS];
static int n_counters;
static char buf[1 << 16];

/*
 * Reads the file @name of the folder @dir (AT_FDCWD: a path) into buf, as a string;
 * -1 if it cannot be opened.
 */
static int slurp(int dir, const char *name)
{
	size_t len = 0;
	ssize_t n;
	int f;

	f = openat(dir, name, O_RDONLY);
	if (f < 0)
		return -1;
	while (len < sizeof(buf) - 1 && (n = read(f, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(f);
	/* A file cut short would give wrong counts, not an error: stop the snapshot. */
	if (len == sizeof(buf) - 1) {
		fprintf(stderr, "snapshot: %s: more than %zu bytes\n", name, sizeof(buf) - 1);
		exit(1);
	}
	buf[len] = '\0';
	return 0;
}

/* The line after @line in buf (its end: an empty string). */
static char *next_line(char *line)
{
	char *next = strchr(line, '\n');

	return next ? next + 1 : line + strlen(line);
}

/* The value of the first line of buf that starts with @prefix (0 if none). */
static unsigned long long field(const char *prefix)
{
	size_t len = strlen(prefix);

	for (char *line = buf; *line; line = next_line(line))
		if (!strncmp(line, prefix, len))
			return strtoull(line + len, NULL, 10);
	return 0;
}

/* The kernel's own figures: see the top. */
static void kernel(void)
{
	unsigned long long pgalloc = 0;

	if (!slurp(AT_FDCWD, "/proc/vmstat")) {
		for (char *line = buf; *line; line = next_line(line))
			if (!strncmp(line, "pgalloc_", 8))
				pgalloc += strtoull(strchr(line, ' ') ?: line, NULL, 10);
		printf("- pgalloc %llu\n", pgalloc);
		printf("- pgfree %llu\n", field("pgfree "));
		printf("- pgfault %llu\n", field("pgfault "));
	}
	if (!slurp(AT_FDCWD, "/proc/meminfo")) {
		printf("- slab_kib %llu\n", field("Slab:"));
		printf("- free_kib %llu\n", field("MemFree:"));
	}
	if (!slurp(AT_FDCWD, "/proc/stat"))
		printf("- ctxt %llu\n", field("ctxt "));
}

/*
 * Calls @fn with each cache directory under @path (an open directory and its name): the
 * subdirectories, not "." and "..", nor symbolic links (SLUB's aliases).
 */
static void each_cache(const char *path, void (*fn)(int dir, const char *name))
{
	struct dirent *e;
	DIR *d;

	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		int dir;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		dir = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY);
		if (dir < 0)
			continue;
		fn(dir, e->d_name);
		close(dir);
	}
	closedir(d);
}

/* One cache of rslub's: its counters and slab bytes. */
static void rslub_cache(int dir, const char *name)
{
	/* "COUNTER VALUE" lines. */
	if (!slurp(dir, "stats")) {
		for (char *line = buf; *line; line = next_line(line)) {
			unsigned long long v;
			char counter[64];

			if (sscanf(line, "%63s %llu", counter, &v) == 2 && v)
				printf("%s %s %llu\n", name, counter, v);
		}
	}
	/* A "bytes pages=N metadata=N" line among others. */
	if (!slurp(dir, "nodes")) {
		for (char *line = buf; *line; line = next_line(line)) {
			unsigned long long page, meta;

			if (sscanf(line, "bytes pages=%llu metadata=%llu", &page, &meta) == 2) {
				printf("%s page_bytes %llu\n", name, page);
				printf("%s meta_bytes %llu\n", name, meta);
			}
		}
	}
}

/* rslub's counters and slab bytes: see the top. */
static void rslub(const char *path)
{
	each_cache(path, rslub_cache);
}

/* Adds each word of @list once; those of the per-cache list are marked so. */
static void add(char *list, int per_cache)
{
	for (char *w = strtok(list, " "); w; w = strtok(NULL, " ")) {
		int i;

		for (i = 0; i < n_counters; i++)
			if (!strcmp(counters[i].name, w))
				break;
		if (i == n_counters) {
			if (n_counters == MAX_COUNTERS) {
				fprintf(stderr, "snapshot: more than %d counters\n", MAX_COUNTERS);
				exit(2);
			}
			counters[n_counters++].name = w;
		}
		counters[i].per_cache |= per_cache;
	}
}

/* One cache of SLUB's: its counters, summed, and printed for those asked per cache. */
static void slub_cache(int dir, const char *name)
{
	for (int i = 0; i < n_counters; i++) {
		struct counter *c = &counters[i];
		unsigned long long v;

		/* A counter this kernel lacks (7.3's sheaves' on 6.12): not printed. */
		if (slurp(dir, c->name) || !*buf)
			continue;
		v = strtoull(buf, NULL, 10);
		c->sum += v;
		c->seen = 1;
		if (c->per_cache && v)
			printf("-s %s/%s %llu\n", name, c->name, v);
	}
}

/* SLUB's own counters: see the top. */
static void slub(void)
{
	/* A kernel without SLUB_STATS: no thousands of files to look for. */
	if (access("/sys/kernel/slab/kmalloc-64/alloc_fastpath", R_OK))
		return;
	each_cache("/sys/kernel/slab", slub_cache);
	for (int i = 0; i < n_counters; i++)
		if (counters[i].seen)
			printf("-k %s %llu\n", counters[i].name, counters[i].sum);
}

int main(int argc, char **argv)
{
	const char *rslub_dir = NULL;
	int stats = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-r") && i + 1 < argc) {
			rslub_dir = argv[++i];
		} else if (!strcmp(argv[i], "-k") && i + 2 < argc) {
			add(argv[++i], 0);
			add(argv[++i], 1);
			stats = 1;
		} else {
			fprintf(stderr, "usage: snapshot [-r DIR] [-k \"SUMMED ...\" \"PER_CACHE ...\"]\n");
			return 2;
		}
	}
	kernel();
	if (rslub_dir)
		rslub(rslub_dir);
	if (stats)
		slub();
	return 0;
}
