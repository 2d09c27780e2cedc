// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* json_str escaping and json_us formatting, compared byte for byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include "base/json.h"
#include "helpers.h"

/* Runs json_str or json_us into a memory buffer and compares with `want`. */
static void check_str(const char *in, const char *want)
{
	struct unit_mem m;

	json_str(unit__mem_open(&m), in);
	unit__assert_mem(&m, want);
}

static void check_us(uint64_t ns, const char *want)
{
	struct unit_mem m;

	json_us(unit__mem_open(&m), ns);
	unit__assert_mem(&m, want);
}

static void test_plain(void **state)
{
	(void)state;
	check_str("", "\"\"");
	check_str("main", "\"main\"");
	check_str("ns::f(int, char const*)", "\"ns::f(int, char const*)\"");
	check_str("a/b", "\"a/b\"");	/* '/' may stay unescaped */
	check_str(NULL, "\"\"");
}

static void test_quote_backslash(void **state)
{
	(void)state;
	check_str("say \"hi\"", "\"say \\\"hi\\\"\"");
	check_str("C:\\dir\\", "\"C:\\\\dir\\\\\"");
	check_str("\"\\\"", "\"\\\"\\\\\\\"\"");
}

static void test_control(void **state)
{
	(void)state;
	check_str("a\nb\tc\rd\be\ff", "\"a\\nb\\tc\\rd\\be\\ff\"");
	check_str("\x01", "\"\\u0001\"");
	check_str("x\x1fy", "\"x\\u001fy\"");
	check_str("\x1b[0m", "\"\\u001b[0m\"");
	check_str("\x7f", "\"\x7f\"");	/* DEL needs no escape in JSON */
}

static void test_utf8_valid(void **state)
{
	(void)state;
	check_str("é", "\"é\"");
	check_str("日本", "\"日本\"");
	/* 2 and 4 byte sequences */
	check_str("caf\xc3\xa9 \xf0\x9f\x94\xa5", "\"caf\xc3\xa9 \xf0\x9f\x94\xa5\"");
	/* U+FFFD itself, and U+10FFFF, the last code point */
	check_str("\xef\xbf\xbd", "\"\xef\xbf\xbd\"");
	check_str("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");
}

static void test_utf8_invalid(void **state)
{
	(void)state;
	check_str("\xff", "\"\\uFFFD\"");
	check_str("a\xff" "b", "\"a\\uFFFDb\"");
	check_str("\x80", "\"\\uFFFD\"");			/* lone continuation */
	check_str("\xc3", "\"\\uFFFD\"");			/* truncated at end */
	check_str("\xc3(", "\"\\uFFFD(\"");			/* truncated, resync */
	check_str("\xe6\x97", "\"\\uFFFD\\uFFFD\"");		/* truncated 3-byte */
	check_str("\xc0\xaf", "\"\\uFFFD\\uFFFD\"");		/* overlong '/' */
	check_str("\xe0\x80\xaf", "\"\\uFFFD\\uFFFD\\uFFFD\"");	/* overlong */
	check_str("\xed\xa0\x80", "\"\\uFFFD\\uFFFD\\uFFFD\"");	/* surrogate U+D800 */
	check_str("\xf4\x90\x80\x80", "\"\\uFFFD\\uFFFD\\uFFFD\\uFFFD\"");	/* > U+10FFFF */
	check_str("\xf8\x88\x80\x80\x80", "\"\\uFFFD\\uFFFD\\uFFFD\\uFFFD\\uFFFD\"");
	/* an escape right after a bad byte still works */
	check_str("\xfe\"", "\"\\uFFFD\\\"\"");
}

static void test_us(void **state)
{
	(void)state;
	check_us(0, "0.000");
	check_us(1, "0.001");
	check_us(999, "0.999");
	check_us(1000, "1.000");
	check_us(1234567, "1234.567");
	check_us(1000010, "1000.010");
	/* beyond a double's 53 bits of mantissa: still exact */
	check_us(UINT64_MAX, "18446744073709551.615");
	check_us(9007199254740993ULL, "9007199254740.993");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_quote_backslash),
		cmocka_unit_test(test_control),
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_invalid),
		cmocka_unit_test(test_us),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
