/* Tests of net_addr_is_loopback (src/net/sock.c), the rule a result's
 * "connected" entries and --metrics-listen judge loopback by: IPv4
 * 127.0.0.0/8, IPv6 ::1, IPv4-mapped 127.x and Unix sockets stay on this
 * machine; every other address, a mapped one outside 127/8 included, does
 * not. Table-driven, through net_resolve of literals (no DNS). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "net/sock.h"

static void test_loopback_addresses(void **state)
{
	(void)state;
	static const struct {
		const char *host;
		bool loopback;
	} cases[] = {
		{"127.0.0.1", true},       {"127.1.2.3", true},         {"127.255.255.254", true},
		{"::1", true},             {"::ffff:127.0.0.1", true},  {"::ffff:127.9.8.7", true},
		{"0:0:0:0:0:0:0:1", true}, {"10.0.0.1", false},         {"128.0.0.1", false},
		{"126.255.255.255", false}, {"192.168.1.1", false},     {"::2", false},
		{"::ffff:10.0.0.1", false}, {"2001:db8::1", false},     {"fe80::1", false},
		{"0.0.0.0", false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct net_addr a;
		const char *why = NULL;
		if (net_resolve(cases[i].host, 80, &a, &why))
			fail_msg("%s does not resolve: %s", cases[i].host, why ? why : "?");
		if (net_addr_is_loopback(&a) != cases[i].loopback)
			fail_msg("%s: loopback %d, want %d", cases[i].host, !cases[i].loopback,
				 cases[i].loopback);
	}
}

static void test_unix_socket_is_loopback(void **state)
{
	(void)state;
	struct net_addr a;
	assert_int_equal(net_addr_unix("/run/pacer-test.sock", &a), 0);
	assert_true(net_addr_is_loopback(&a));
	char s[128];
	assert_string_equal(net_addr_str(&a, s, sizeof s), "unix:/run/pacer-test.sock");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loopback_addresses),
		cmocka_unit_test(test_unix_socket_is_loopback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
