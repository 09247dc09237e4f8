// SPDX-License-Identifier: GPL-2.0
/*
 * TCP workloads over loopback for the real-workload benchmarks (make bench), built
 * static by scripts/bench/vm.sh into the benchmark guest, which has no other user space
 * than busybox. Each checks what it receives, and exits non-zero on any error.
 *
 *   pingpong server PORT                 echo every message back, until the peer closes
 *   pingpong client PORT TRIPS SIZE      TRIPS request/response round trips of SIZE bytes
 *                                        (seed 002: sockperf's ping-pong, TCP_NODELAY)
 *   pingpong sink PORT                   read a stream to its end, check its pattern
 *   pingpong stream PORT MIB             write MIB MiB in 64 KiB writes (seed 000: iperf3)
 *   pingpong kick                        one UDP datagram over loopback from each CPU:
 *                                        its NET_RX softirq frees the skbs deferred to it
 *
 * Prints one line: what was done, and "ok" or the error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

static int fail(const char *what)
{
	printf("error: %s: %s\n", what, strerror(errno));
	return 1;
}

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Accepts one connection on PORT. */
static int accept_one(int port)
{
	struct sockaddr_in a = loopback(port);
	int one = 1, l, fd;

	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		return -1;
	fd = accept(l, NULL, NULL);
	close(l);
	if (fd >= 0)
		nodelay(fd);
	return fd;
}

/* Connects to PORT, retrying while the server is not listening yet. */
static int connect_to(int port)
{
	struct sockaddr_in a = loopback(port);
	int tries, fd;

	for (tries = 0; tries < 100; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			nodelay(fd);
			return fd;
		}
		close(fd);
		usleep(100000);
	}
	return -1;
}

static int read_full(int fd, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);

		if (r <= 0)
			return r < 0 ? -1 : 1;
		got += r;
	}
	return 0;
}

static int write_full(int fd, const char *buf, size_t n)
{
	size_t put = 0;

	while (put < n) {
		ssize_t w = write(fd, buf + put, n - put);

		if (w < 0)
			return -1;
		put += w;
	}
	return 0;
}

static int server(int port)
{
	static char buf[CHUNK];
	long trips = 0;
	int fd = accept_one(port);
	ssize_t r;

	if (fd < 0)
		return fail("accept");
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		if (write_full(fd, buf, r))
			return fail("write");
		trips++;
	}
	if (r < 0)
		return fail("read");
	printf("server: %ld reads echoed, ok\n", trips);
	return 0;
}

static int client(int port, long trips, size_t size)
{
	static char out[CHUNK], in[CHUNK];
	int fd = connect_to(port);
	long i;

	if (fd < 0)
		return fail("connect");
	if (size > CHUNK)
		size = CHUNK;
	for (i = 0; i < trips; i++) {
		memset(out, (int)(i & 0xff), size);
		if (write_full(fd, out, size))
			return fail("write");
		if (read_full(fd, in, size))
			return fail("read");
		if (memcmp(in, out, size)) {
			printf("error: round trip %ld came back changed\n", i);
			return 1;
		}
	}
	close(fd);
	printf("%ld round trips of %zu bytes ok", trips, size);
	return 0;
}

static int sink(int port)
{
	static char buf[CHUNK];
	unsigned long long total = 0;
	int fd = accept_one(port);
	ssize_t r, k;

	if (fd < 0)
		return fail("accept");
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		for (k = 0; k < r; k++) {
			if (buf[k] != (char)((total + k) * 7)) {
				printf("error: byte %llu changed\n", total + k);
				return 1;
			}
		}
		total += r;
	}
	if (r < 0)
		return fail("read");
	printf("sink: %llu bytes ok\n", total);
	return 0;
}

static int stream(int port, long mib)
{
	static char buf[CHUNK];
	unsigned long long off = 0;
	int fd = connect_to(port);
	long i, n = mib * 1024 * 1024 / CHUNK;
	size_t k;

	if (fd < 0)
		return fail("connect");
	for (i = 0; i < n; i++) {
		for (k = 0; k < CHUNK; k++)
			buf[k] = (char)((off + k) * 7);
		if (write_full(fd, buf, CHUNK))
			return fail("write");
		off += CHUNK;
	}
	close(fd);
	printf("%ld MiB streamed ok", mib);
	return 0;
}

static int kick(void)
{
	struct sockaddr_in a = loopback(9);
	cpu_set_t all, one;
	int cpu, fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || sched_getaffinity(0, sizeof(all), &all))
		return fail("socket");
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			return fail("sched_setaffinity");
		sendto(fd, "x", 1, 0, (struct sockaddr *)&a, sizeof(a));
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(mode, "server") && argc == 3)
		return server(atoi(argv[2]));
	if (!strcmp(mode, "client") && argc == 5)
		return client(atoi(argv[2]), atol(argv[3]), strtoul(argv[4], NULL, 0));
	if (!strcmp(mode, "sink") && argc == 3)
		return sink(atoi(argv[2]));
	if (!strcmp(mode, "stream") && argc == 4)
		return stream(atoi(argv[2]), atol(argv[3]));
	if (!strcmp(mode, "kick") && argc == 2)
		return kick();
	fprintf(stderr, "usage: see the head of scripts/bench/workloads/pingpong.c\n");
	return 2;
}
