/* iosched kernel oracle: the scenario file, as the C driver reads it. The format is the
 * project's own (crates/lab/src/oracle/scenario.rs documents it; both sides parse it). */
#ifndef ORACLE_SCENARIO_H
#define ORACLE_SCENARIO_H

#include <stdbool.h>
#include <stdint.h>

#define MAX_ITEMS 4096

struct sc_device {
	uint32_t depth, nr_requests;
	bool rotational;
	uint64_t base_ns, per_sector_ns, seek_min_ns, seek_per_ksector_ns, seek_max_ns;
	uint32_t max_sectors;
	uint64_t capacity;
};

struct sc_proc {
	uint32_t pid;
	uint16_t ioprio;
	bool random, write, sync;
	uint32_t depth, size;
	uint64_t think_ns, base, span, gap, start_ns, stop_ns, seed;
	/* BFQ scenarios: the process's cgroup path ("" is the root) and nice value. */
	char cgroup[64];
	int nice;
};

struct sc_arrival {
	uint64_t time_ns;
	uint32_t pid, sectors;
	bool write, sync, fua, head;
	uint64_t sector;
};

struct sc_tunable {
	bool at_boot;
	uint64_t time_ns;
	char name[32], value[32];
	/* `cgweight`: the cgroup whose bfq.weight is written (name is "bfq.weight"). */
	char path[64];
};

/* A cgroup, declared after its parent, with its initial bfq.weight (0: the default). */
struct sc_cgroup {
	char path[64];
	uint32_t weight;
};

struct sc_exit {
	uint64_t time_ns;
	uint32_t pid;
};

struct scenario {
	uint64_t origin_ns, end_ns;
	struct sc_device device;
	int nprocs, narrivals, ntunables, nexits, ncgroups;
	struct sc_cgroup cgroups[64];
	struct sc_proc procs[MAX_ITEMS];
	struct sc_arrival arrivals[MAX_ITEMS];
	struct sc_tunable tunables[MAX_ITEMS];
	struct sc_exit exits[MAX_ITEMS];
};

/* Parses `path` into `sc`; on error prints `path:line: what` and returns -1. */
int scenario_read(const char *path, struct scenario *sc);

#endif
