/* pacer fuzz harnesses — CHECK(c): an invariant of the code under test.
 * When it does not hold, the harness prints it and where, then abort()s,
 * which libFuzzer reports as a crash (and saves the input) and the corpus
 * replay (tests/fuzz/replay_main.c) as a failure.
 *
 * Define FUZZ_NAME (the harness's name, a string literal) before including
 * this; define FUZZ_INPUT too (an expression giving a NUL-terminated
 * string) to have the message show that input. */
#ifndef PACER_TESTS_COMMON_FUZZ_CHECK_H
#define PACER_TESTS_COMMON_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#ifndef FUZZ_NAME
#error "define FUZZ_NAME before including common/fuzz_check.h"
#endif

#ifdef FUZZ_INPUT
#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, FUZZ_NAME ": invariant failed: %s (%s:%d) input \"%s\"\n", \
				#c, __FILE__, __LINE__, FUZZ_INPUT);                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)
#else
#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, FUZZ_NAME ": invariant failed: %s (%s:%d)\n", #c,          \
				__FILE__, __LINE__);                                               \
			abort();                                                                   \
		}                                                                                  \
	} while (0)
#endif

#endif
