/* check_main.h: main() of a Check test program (included by the shared
 * harnesses shapes_util.h and runtime_util.h).
 *
 * OAC_CHECK_MAIN(suite) defines main(), which runs the suite suite()
 * returns and exits with failure when any test failed.
 */
#ifndef OAC_TESTS_CHECK_MAIN_H
#define OAC_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#define OAC_CHECK_MAIN(suite)                                     \
    int main(void)                                                \
    {                                                             \
        SRunner *sr = srunner_create(suite());                    \
        srunner_run_all(sr, CK_NORMAL);                           \
        int failed = srunner_ntests_failed(sr);                   \
        srunner_free(sr);                                         \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;              \
    }

#endif /* OAC_TESTS_CHECK_MAIN_H */
