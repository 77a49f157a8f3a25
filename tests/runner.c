/* runner.c: the only main() of the Check programs.
 *
 * Each tests/check_<module>.c defines test_suite() (tests/harness.h);
 * this file, linked into every one of them, runs that suite and exits
 * non-zero when a test failed.  One program per module keeps
 * `make -j2 check` parallel and each log about one module.  Check's own
 * environment variables apply (CK_RUN_CASE, CK_FORK, CK_VERBOSITY,
 * CK_DEFAULT_TIMEOUT, ...).
 */
#include "harness.h"

int main(void)
{
    SRunner *sr = srunner_create(test_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
