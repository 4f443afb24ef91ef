// SPDX-License-Identifier: GPL-2.0
/*
 * JSON: the reader (Jansson, through lib/json.h) on documents with known
 * content and known errors, surrogate pairs included; the one writer, read
 * back by the reader; and the print path's JSON, which is that writer's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "lib/json.h"
#include "lib/out.h"

TEST(reader_values)
{
	const char *doc = "{ \"a\": [1, -2.5e3, true, false, null],\n"
			  "  \"s\": \"x\\n\\u00e9\\\"\", \"o\": { \"k\": {} }, \"e\": [],\n"
			  "  \"big\": 123456789012345678901234567890 }";
	const json_t *a, *s;
	json_t *v;
	char err[128];
	double d;

	ASSERT_EQ(0, tjson_parse(doc, &v, err, sizeof(err)));
	a = json_object_get(v, "a");
	ASSERT_TRUE(json_is_array(a));
	EXPECT_EQ(5, json_array_size(a));
	EXPECT_TRUE(json_number_value(json_array_get(a, 0)) == 1);
	EXPECT_TRUE(json_number_value(json_array_get(a, 1)) == -2500);
	EXPECT_TRUE(json_is_true(json_array_get(a, 2)));
	EXPECT_TRUE(json_is_false(json_array_get(a, 3)));
	EXPECT_TRUE(json_is_null(json_array_get(a, 4)));
	EXPECT_EQ(NULL, json_array_get(a, 5));
	s = json_object_get(v, "s");
	ASSERT_TRUE(json_is_string(s));
	EXPECT_STREQ("x\n\xc3\xa9\"", json_string_value(s));	/* U+00E9 in UTF-8 */
	EXPECT_TRUE(json_is_object(json_object_get(json_object_get(v, "o"), "k")));
	EXPECT_EQ(0, json_array_size(json_object_get(v, "e")));
	EXPECT_EQ(0, tjson_get_num(v, "big", &d));
	EXPECT_TRUE(d > 1.2e29 && d < 1.3e29);
	EXPECT_EQ(-ENOENT, tjson_get_num(v, "missing", &d));
	EXPECT_EQ(-EINVAL, tjson_get_num(v, "s", &d));
	EXPECT_EQ(-ENOENT, tjson_get_num(json_array_get(a, 4), "x", &d));	/* not an object */
	json_decref(v);
}

/* RFC 8259 section 7: a character outside the BMP is a surrogate pair */
TEST(reader_surrogate_pairs)
{
	const char *s;
	json_t *v;
	char err[128];

	ASSERT_EQ(0, tjson_parse("{\"e\": \"a\\ud83d\\ude00b\"}", &v, err, sizeof(err)));
	ASSERT_EQ(0, tjson_get_str(v, "e", &s));
	EXPECT_STREQ("a\xf0\x9f\x98\x80" "b", s);	/* U+1F600 in UTF-8 */
	json_decref(v);
	/* the same character unescaped, as UTF-8 in the document */
	ASSERT_EQ(0, tjson_parse("\"\xf0\x9f\x98\x80\"", &v, err, sizeof(err)));
	EXPECT_STREQ("\xf0\x9f\x98\x80", json_string_value(v));
	json_decref(v);
	/* halves of a pair alone, or in the wrong order, are not characters */
	EXPECT_EQ(-EINVAL, tjson_parse("\"\\ud83d\"", &v, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, tjson_parse("\"\\ude00\"", &v, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, tjson_parse("\"\\ude00\\ud83d\"", &v, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, tjson_parse("\"\\ud83dx\"", &v, err, sizeof(err)));
}

TEST(reader_errors_name_the_place)
{
	static const struct {
		const char *doc, *where;
	} bad[] = {
		{ "{\"a\": 1,}", "line 1 col 9" },
		{ "[1, 2", "line 1 col 5" },
		{ "{\n  \"a\": tru }", "line 2 col" },
		{ "{\"a\": \"x\n\"}", "newline" },
		{ "[0x10]", "line 1 col 3" },
		{ "{} {}", "end of file expected" },
		{ "\"\\q\"", "invalid escape" },
		{ "{\"a\": 1, \"a\": 2}", "duplicate" },
		{ "\"\\u0000\"", "line 1" },
		{ "\"\xff\"", "decode byte" },
		{ "[1e999]", "overflow" },
		{ "", "line 1" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *v = (json_t *)1;
		char err[160] = "";

		EXPECT_EQ(-EINVAL, tjson_parse(bad[i].doc, &v, err, sizeof(err)));
		EXPECT_NE(NULL, strstr(err, bad[i].where)) TH_LOG("%s -> %s", bad[i].doc, err);
		EXPECT_EQ(NULL, v);
	}
}

static void write_doc(struct jw *w)
{
	jw_obj_open(w, NULL);
	jw_str(w, "s", "q\"b\\s\n\t\r\x01 \xc3\xa9");
	jw_double(w, "d", 0.1);
	jw_double(w, "nan", 0.0 / 0.0);
	jw_u64(w, "u", UINT64_MAX);
	jw_s64(w, "i", INT64_MIN);
	jw_bool(w, "t", true);
	jw_null(w, "n");
	jw_str(w, "nulls", NULL);
	jw_arr_open(w, "a");
	jw_arr_open(w, NULL);
	jw_arr_close(w);
	jw_obj_open(w, NULL);
	jw_obj_close(w);
	jw_arr_close(w);
	jw_obj_close(w);
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* What the writer writes, compact or pretty, the reader reads back exactly. */
TEST(writer_round_trip)
{
	for (int pretty = 0; pretty < 2; pretty++) {
		char *buf = NULL, err[128];
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		const char *s;
		struct jw w;
		json_t *v;
		double d;

		ASSERT_NE(NULL, f);
		jw_init(&w, f, pretty);
		write_doc(&w);
		EXPECT_EQ(0, jw_finish(&w));
		fclose(f);
		EXPECT_EQ('\n', buf[len - 1]);
		/* compact: one line; pretty: one line per member and bracket */
		EXPECT_EQ(pretty ? 14 : 1, lines(buf));
		ASSERT_EQ(0, tjson_parse(buf, &v, err, sizeof(err))) TH_LOG("%s: %s", err, buf);
		ASSERT_EQ(0, tjson_get_str(v, "s", &s));
		EXPECT_STREQ("q\"b\\s\n\t\r\x01 \xc3\xa9", s);
		ASSERT_EQ(0, tjson_get_num(v, "d", &d));
		EXPECT_TRUE(d == 0.1);	/* %.17g: the same double back */
		EXPECT_TRUE(json_is_null(json_object_get(v, "nan")));
		EXPECT_TRUE(json_is_null(json_object_get(v, "nulls")));
		ASSERT_EQ(0, tjson_get_num(v, "u", &d));
		EXPECT_TRUE(d == 18446744073709551615.0);
		EXPECT_TRUE(json_is_true(json_object_get(v, "t")));
		EXPECT_EQ(2, json_array_size(json_object_get(v, "a")));
		json_decref(v);
		free(buf);
	}
}

/* The print path in JSON mode writes through the writer: the same bytes. */
TEST(print_path_is_the_writer)
{
	char *a = NULL, *b = NULL;
	size_t la = 0, lb = 0;
	FILE *fa = open_memstream(&a, &la), *fb = open_memstream(&b, &lb);
	struct jw w;

	ASSERT_TRUE(fa && fb);
	out_init(fa, true, true);
	out_obj_open(NULL);
	out_str("s", "text %s\n", "q\"b\\s\n\t\r\x01 \xc3\xa9");
	out_double("d", "text %f\n", 0.1);
	out_null("n", "text\n");
	out_arr_open("a");
	out_u64(NULL, "%llu", 1);
	out_arr_close();
	out_obj_close();
	EXPECT_EQ(0, out_finish());
	fclose(fa);
	jw_init(&w, fb, true);
	jw_obj_open(&w, NULL);
	jw_str(&w, "s", "q\"b\\s\n\t\r\x01 \xc3\xa9");
	jw_double(&w, "d", 0.1);
	jw_null(&w, "n");
	jw_arr_open(&w, "a");
	jw_u64(&w, NULL, 1);
	jw_arr_close(&w);
	jw_obj_close(&w);
	EXPECT_EQ(0, jw_finish(&w));
	fclose(fb);
	EXPECT_STREQ(b, a);
	free(a);
	free(b);
}

TEST_HARNESS_MAIN
