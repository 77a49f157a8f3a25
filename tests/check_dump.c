/* check_dump.c: lib/run/dump.c and lib/model/outfile.c — the files a run is asked
 * to write (contract 8: -o and --dump never follow a symlink they did not
 * create and never write two values to one file; a file that cannot be
 * written is output-write-failed), and the tool's own failures in the
 * report (oac_diags_add_failure, analysis-failed).
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static char root[] = "/tmp/oac_dump_XXXXXX";

static void setup(void)
{
    strcpy(root, "/tmp/oac_dump_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

static const char *at(const char *name)
{
    static char path[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", root, name);
    return path[k];
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static const char *get(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Nothing of ours left in the folder but what is listed. */
static int temp_files(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q oac-tmp", root);
    return system(cmd) == 0;
}

/* ---- oac_outfile ------------------------------------------------------- */

static int write_text(const char *path, const char *text)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_outfile *o = NULL;
    int rc = oac_outfile_open(ctx, &o, path);
    if (rc == OAC_OK) {
        fputs(text, oac_outfile_stream(o));
        rc = oac_outfile_commit(o);
    }
    oac_ctx_free(ctx);
    return rc;
}

START_TEST(test_outfile_replaces_whole)
{
    /* A new file, then replacing it: the new text, the old mode. */
    ck_assert_int_eq(write_text(at("r.txt"), "one"), OAC_OK);
    ck_assert_str_eq(get(at("r.txt")), "one");
    ck_assert_int_eq(chmod(at("r.txt"), 0640), 0);
    ck_assert_int_eq(write_text(at("r.txt"), "two"), OAC_OK);
    ck_assert_str_eq(get(at("r.txt")), "two");
    struct stat st;
    ck_assert_int_eq(stat(at("r.txt"), &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0640);
    /* Abort: the old file as it was, nothing left beside it. */
    oac_ctx *ctx = oac_ctx_new();
    oac_outfile *o;
    ck_assert_int_eq(oac_outfile_open(ctx, &o, at("r.txt")), OAC_OK);
    fputs("three", oac_outfile_stream(o));
    oac_outfile_abort(o);
    ck_assert_str_eq(get(at("r.txt")), "two");
    ck_assert(!temp_files());
    /* A character device (a copy of /dev/null made here, as root; the
     * real one is never touched) is refused, not replaced (contract 12). */
    if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
        ck_assert_int_eq(write_text(at("null"), "x"), OAC_EINVAL);
        ck_assert_int_eq(lstat(at("null"), &st), 0);
        ck_assert(S_ISCHR(st.st_mode));
    }
    /* A target name of 245 bytes: the temporary name fits too. */
    char longname[300];
    memset(longname, 'n', 245);
    longname[245] = '\0';
    ck_assert_int_eq(write_text(at(longname), "long"), OAC_OK);
    ck_assert_str_eq(get(at(longname)), "long");
    ck_assert(!temp_files());
    oac_ctx_free(ctx);
}
END_TEST

START_TEST(test_outfile_refuses)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_outfile *o = NULL;
    /* A symlink: neither followed nor replaced. */
    put(at("target"), "kept");
    ck_assert_int_eq(symlink("target", at("link")), 0);
    ck_assert_int_eq(oac_outfile_open(ctx, &o, at("link")), OAC_EIO);
    ck_assert_ptr_nonnull(strstr(oac_errmsg(ctx), "symbolic link"));
    ck_assert_str_eq(get(at("target")), "kept");
    struct stat st;
    ck_assert_int_eq(lstat(at("link"), &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    /* A dangling one too (it would create its target). */
    ck_assert_int_eq(symlink("nowhere", at("dangling")), 0);
    ck_assert_int_eq(oac_outfile_open(ctx, &o, at("dangling")), OAC_EIO);
    ck_assert_int_eq(access(at("nowhere"), F_OK), -1);
    /* A folder, a missing folder, a name too long. */
    ck_assert_int_eq(mkdir(at("sub"), 0700), 0);
    ck_assert_int_eq(oac_outfile_open(ctx, &o, at("sub")), OAC_EINVAL);
    ck_assert_int_eq(oac_outfile_open(ctx, &o, at("no/such")), OAC_EIO);
    char name[400];
    memset(name, 'n', 300);
    name[300] = '\0';
    ck_assert_int_eq(oac_outfile_open(ctx, &o, at(name)), OAC_EIO);
    /* A FIFO: refused at once (contract 12), never a hang, still a FIFO. */
    ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
    ck_assert_int_eq(oac_outfile_open(ctx, &o, at("fifo")), OAC_EINVAL);
    ck_assert_int_eq(lstat(at("fifo"), &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    /* An input of the call (guard.c): refused, by inode and by the path
     * of a file not there yet. */
    put(at("in.txt"), "input");
    ck_assert_int_eq(link(at("in.txt"), at("in-hard.txt")), 0);
    ck_assert_int_eq(oac_guard_add(ctx, at("in.txt"), "the model"), OAC_OK);
    ck_assert_int_eq(oac_guard_add(ctx, at("later.bin"), "the model's external data"),
                     OAC_OK);
    ck_assert_int_eq(oac_outfile_open(ctx, &o, at("in-hard.txt")), OAC_EINVAL);
    ck_assert_ptr_nonnull(strstr(oac_errmsg(ctx), "the model"));
    ck_assert_int_eq(oac_outfile_open(ctx, &o, at("later.bin")), OAC_EINVAL);
    ck_assert_int_eq(access(at("later.bin"), F_OK), -1);
    ck_assert_str_eq(get(at("in.txt")), "input");
    /* A file in folders not made yet, spelled two ways ("." and ".."
     * taken lexically below the folder that exists). */
    ck_assert_int_eq(oac_guard_add(ctx, at("new/sub/f.pb"), "an --input file"), OAC_OK);
    ck_assert_int_eq(oac_guard_check(ctx, at("./new//x/../sub/./f.pb"), "--dump"), OAC_EINVAL);
    ck_assert_int_eq(oac_guard_check(ctx, at("new/sub/g.pb"), "--dump"), OAC_OK);
    ck_assert_int_eq(oac_guard_check(ctx, at("new/f.pb"), "--dump"), OAC_OK);
    /* -o reserved: refused to --dump, not to itself. */
    ck_assert_int_eq(oac_guard_add_output(ctx, at("r.json"), "-o"), OAC_OK);
    ck_assert_int_eq(oac_outfile_open_as(ctx, &o, at("r.json"), "--dump"), OAC_EINVAL);
    ck_assert_int_eq(oac_outfile_open(ctx, &o, at("r.json")), OAC_OK);
    oac_outfile_abort(o);
    o = NULL;
    ck_assert_ptr_null(o);
    ck_assert(!temp_files());
    oac_ctx_free(ctx);
}
END_TEST

/* ---- --dump --------------------------------------------------------------- */

/* x FLOAT[2] -> Neg -> 'a/b', Identity -> 'a_b'. */
static void two_names(oac_mb *mb)
{
    oac_gb *g = oac_mb_graph(mb);
    oac_gb_input(g, "x", OAC_T_FLOAT, "2");
    oac_gb_node(g, "Neg", NULL, "n1", "x", "a/b");
    oac_gb_node(g, "Identity", NULL, "n2", "x", "a_b");
    oac_gb_output(g, "a/b", OAC_T_FLOAT, "2");
    oac_gb_output(g, "a_b", OAC_T_FLOAT, "2");
}

/* Run two_names with --dump into root/folder. */
static int dump_into(fx *f, const char *folder)
{
    fx_build(f, NULL);
    two_names(f->mb);
    fx_load(f);
    oac_run_opts ro = { .steps = 1, .dump_dir = at(folder) };
    return fx_check_run(f, NULL, 0, NULL, 0, &ro, NULL);
}

static void dump_fresh(fx *f)
{
    ck_assert_int_eq(mkdir(at("fresh"), 0700), 0);
    ck_assert_int_eq(dump_into(f, "fresh"), OAC_OK);
    ck_assert_int_eq(access(at("fresh/a%2Fb.pb"), F_OK), 0);
    ck_assert_int_eq(access(at("fresh/a_b.pb"), F_OK), 0);
}

/* A folder not there yet: the dump makes it (one level) and writes. */
static void dump_made(fx *f)
{
    ck_assert_int_eq(access(at("made"), F_OK), -1);
    ck_assert_int_eq(dump_into(f, "made"), OAC_OK);
    ck_assert_int_eq(access(at("made/a%2Fb.pb"), F_OK), 0);
    ck_assert_int_eq(access(at("made/a_b.pb"), F_OK), 0);
}

/* A symlink planted where a_b's file goes. */
static void dump_planted(fx *f)
{
    ck_assert_int_eq(mkdir(at("planted"), 0700), 0);
    put(at("victim"), "kept");
    ck_assert_int_eq(symlink("../victim", at("planted/a_b.pb")), 0);
    ck_assert_int_eq(dump_into(f, "planted"), OAC_ERUNTIME);
    ck_assert_str_eq(get(at("victim")), "kept");
    ck_assert_int_eq(access(at("planted/a%2Fb.pb"), F_OK), 0);
}

/* A folder that is not there: every value fails, each said. */
static void dump_missing(fx *f)
{
    ck_assert_int_eq(dump_into(f, "no/such"), OAC_ERUNTIME);
    ck_assert_uint_eq(diag_count(f->d, OAC_OUTPUT_WRITE_FAILED), 2);
}

/* ---- the tool's own failures ----------------------------------------------- */

/* A check stopped by a failed allocation, and what the tool says of it. */
static void check_stops(fx *f, unsigned long fail_at)
{
    fx_example(f, "toy_decoder");
    oac_ctx_fail_alloc_after(f->ctx, fail_at);
    int rc = fx_check(f, NULL);
    if (rc < 0)
        ck_assert_int_eq(oac_diags_add_failure(f->d, f->ctx, rc, "the check stopped"), OAC_OK);
    oac_ctx_fail_alloc_after(f->ctx, 0);
}
static void check_out_of_memory(fx *f) { check_stops(f, 3); }
static void check_enough_memory(fx *f) { check_stops(f, 0); }

static const scene_case rows[] = {
    { "dump_planted", dump_planted, WANT(OAC_OUTPUT_WRITE_FAILED), NULL, "a_b", NULL },
    { "dump_missing", dump_missing, WANT(OAC_OUTPUT_WRITE_FAILED), NULL, "a/b", NULL },
    { "dump_fresh", dump_fresh, NEAR(OAC_OUTPUT_WRITE_FAILED) },
    { "dump_made", dump_made, NEAR(OAC_OUTPUT_WRITE_FAILED) },
    { "check_out_of_memory", check_out_of_memory, WANT(OAC_ANALYSIS_FAILED), NULL, NULL, NULL },
    { "check_enough_memory", check_enough_memory, NEAR(OAC_ANALYSIS_FAILED) },
};
CASES_TEST(rows)

START_TEST(test_failure_codes)
{
    /* Input that could not be read is parse-error; the message is the
     * caller's words and the context's reason. */
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = oac_diags_new(ctx);
    oac_err(ctx, OAC_EIO, "x.pb: short read");
    ck_assert_int_eq(oac_diags_add_failure(d, ctx, OAC_EIO, "the run stopped"), OAC_OK);
    oac_err(ctx, OAC_EINTERNAL, "%s", "");
    ck_assert_int_eq(oac_diags_add_failure(d, ctx, OAC_ENOMEM, "the check stopped"), OAC_OK);
    ck_assert_uint_eq(oac_diags_count(d), 2);
    ck_assert_int_eq(oac_diags_get(d, 0)->code, OAC_PARSE_ERROR);
    ck_assert_str_eq(oac_diags_get(d, 0)->message, "the run stopped: x.pb: short read");
    ck_assert_int_eq(oac_diags_get(d, 1)->code, OAC_ANALYSIS_FAILED);
    ck_assert_str_eq(oac_diags_get(d, 1)->message, "the check stopped: out of memory");
    ck_assert_int_eq(oac_diags_get(d, 1)->severity, OAC_SEV_ERROR);
    /* Not a failure: refused. */
    ck_assert_int_eq(oac_diags_add_failure(d, ctx, OAC_OK, "x"), OAC_EINVAL);
    oac_diags_free(d);
    oac_ctx_free(ctx);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("dump");
    TCase *tc = tcase_create("dump");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_outfile_replaces_whole);
    tcase_add_test(tc, test_outfile_refuses);
    tcase_add_test(tc, test_failure_codes);
    ADD_CASES(tc, rows);
    suite_add_tcase(s, tc);
    return s;
}
