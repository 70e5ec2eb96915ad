/* libFuzzer harness for the steal-time reader of /proc/stat
 * (src/util/sysinfo.c, sysinfo_steal_parse).
 *
 * Input: the text, read only up to its length (never terminated). The
 * parse must not read past it, and: a known sample has at least one CPU,
 * its mask's CPUs among them and their ticks within the machine's; the
 * text without what follows its last newline parses the same (a cut line
 * is not read); a second parse gives the same sample (no hidden state); a
 * mask of every CPU makes the generator's figures the machine's; between a
 * sample and itself the steal is zero. Violations abort(). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/sysinfo.h"

#define FUZZ_NAME "fuzz_procstat"
#include "common/fuzz_check.h"

static bool same(const struct steal_sample *a, const struct steal_sample *b)
{
	return a->known == b->known && a->gen_ticks == b->gen_ticks &&
	       a->all_ticks == b->all_ticks && a->gen_cpus == b->gen_cpus &&
	       a->all_cpus == b->all_cpus;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	/* an exact-size heap copy: ASan sees a read past the end */
	char *t = malloc(size ? size : 1);
	if (!t)
		return 0;
	memcpy(t, data, size);
	cpu_set_t mask, all;
	CPU_ZERO(&mask);
	CPU_ZERO(&all);
	for (int i = 0; i < CPU_SETSIZE; i++) {
		CPU_SET(i, &all);
		if (i % 3 == 1)
			CPU_SET(i, &mask);
	}
	struct steal_sample s, again, every, cut;
	sysinfo_steal_parse(t, size, &mask, &s);
	if (s.known) {
		CHECK(s.all_cpus >= 1);
		CHECK(s.gen_cpus >= 1 && s.gen_cpus <= s.all_cpus);
		CHECK(s.gen_ticks <= s.all_ticks);
	}
	sysinfo_steal_parse(t, size, &mask, &again);
	CHECK(same(&s, &again));
	sysinfo_steal_parse(t, size, &all, &every);
	CHECK(every.all_cpus == s.all_cpus && every.all_ticks == s.all_ticks);
	if (every.known)
		CHECK(every.gen_cpus == every.all_cpus && every.gen_ticks == every.all_ticks);
	/* a cut line after the last newline is not read */
	const char *nl = size ? memrchr(t, '\n', size) : NULL;
	size_t whole = nl ? (size_t)(nl - t) + 1 : 0;
	sysinfo_steal_parse(t, whole, &mask, &cut);
	CHECK(same(&s, &cut));
	if (s.known) {
		s.tick_ns = 10000000;
		s.at_ns = 5;
		struct steal_span sp;
		CHECK(sysinfo_steal_between(&s, &s, 0, &sp));
		CHECK(sp.gen_ns == 0 && sp.all_ns == 0 && sp.gen_span_ns == 0);
	}
	free(t);
	return 0;
}
