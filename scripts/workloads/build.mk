# SPDX-License-Identifier: GPL-2.0
#
# The build of make bench's whole-system section (seed 003, whose thread timed kernel
# builds): ten C files of Linux 7.3's host tools (Kconfig, kallsyms, fixdep, unifdef),
# which need only the C library's headers, compiled with gcc -O2 in the guest by
# make -j<vCPUs>. scripts/bench_vm.sh copies SRCS, the headers they include and the
# compiler into the guest's /build and /usr; scripts/bench_whole_guest.sh runs it.
#
#   make -f build.mk -jN    compile every file
#   make -f build.mk -jN warm  compile four of them (the warm-up run's build: the same
#                           programs and kernel paths, a fifth of the lines)
#   make -f build.mk clean  remove the objects
#   make -f build.mk count  print the number of files
#   make -f build.mk srcs   print the files' paths
SRCS := scripts/kconfig/conf.c scripts/kconfig/confdata.c scripts/kconfig/expr.c \
	scripts/kconfig/menu.c scripts/kconfig/preprocess.c scripts/kconfig/symbol.c \
	scripts/kconfig/util.c scripts/kallsyms.c scripts/basic/fixdep.c scripts/unifdef.c
OBJS := $(SRCS:.c=.o)
WARM := scripts/kconfig/util.o scripts/basic/fixdep.o scripts/kconfig/preprocess.o \
	scripts/kallsyms.o

all: $(OBJS)

warm: $(WARM)

%.o: %.c
	gcc -O2 -I scripts/include -c $< -o $@

clean:
	rm -f $(OBJS)

count:
	@echo $(words $(SRCS))

srcs:
	@echo $(SRCS)

.PHONY: all warm clean count srcs
