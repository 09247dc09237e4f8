# SPDX-License-Identifier: GPL-2.0
#
# The build of make bench's whole-system section (seed 003, whose thread timed kernel
# builds): seven C files of Linux 7.3's host tools (Kconfig, kallsyms, fixdep), which
# need only the C library's headers, compiled with gcc -O2 in the guest by
# make -j<vCPUs>. scripts/bench/vm.sh copies SRCS, the headers they include and the
# compiler into the guest's /build and /usr; scripts/bench/whole_guest.sh runs it.
#
#   make -f build.mk -jN    compile every file
#   make -f build.mk -jN warm  compile two of them (the warm-up run's build: the same
#                           programs and kernel paths, a tenth of the lines)
#   make -f build.mk clean  remove the objects
#   make -f build.mk count  print the number of files
#   make -f build.mk srcs   print the files' paths
# Seven files, not the ten of before (conf.c, menu.c and unifdef.c went): the build's
# six boots were a fifth of make bench's time (README, "Times").
SRCS := scripts/kconfig/confdata.c scripts/kconfig/expr.c scripts/kconfig/preprocess.c \
	scripts/kconfig/symbol.c scripts/kconfig/util.c scripts/kallsyms.c scripts/basic/fixdep.c
OBJS := $(SRCS:.c=.o)
WARM := scripts/kconfig/util.o scripts/basic/fixdep.o

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
