/* pacer unit tests — CHECK(cond, fmt, ...): fails the test as cmocka's
 * assert_true does, but prints the condition, where it is, and a message
 * with the values involved (cmocka's assert_* print only one side).
 * Include after <cmocka.h>. */
#ifndef PACER_TESTS_COMMON_CHECK_H
#define PACER_TESTS_COMMON_CHECK_H

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			print_error("%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);       \
			print_error(__VA_ARGS__);                                                  \
			print_error("\n");                                                         \
			fail();                                                                    \
		}                                                                                  \
	} while (0)

#endif
