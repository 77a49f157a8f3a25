/* cpu_run.c: run a command and report its CPU time and peak RSS, for
 * bench/bench_check.sh.
 *
 *   cpu_run OUT CMD [ARG...]
 *
 * Runs CMD with standard output in OUT.out and standard error in OUT.err,
 * waits for it (wait4) and prints one line: its CPU seconds (user +
 * system, of CMD and what it waited for), its peak RSS in KiB and its
 * exit status (128 + signal when killed).  A C program so that neither
 * figure carries an interpreter's: the peak RSS Linux reports for a child
 * includes its memory before exec, which for a Python parent's child is
 * Python's, and this process is small.  Owns nothing of the library.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cpu_run OUT CMD [ARG...]\n");
        return 2;
    }
    char out[4096], err[4096];
    snprintf(out, sizeof out, "%s.out", argv[1]);
    snprintf(err, sizeof err, "%s.err", argv[1]);
    pid_t pid = fork();
    if (pid < 0) {
        perror("cpu_run: fork");
        return 2;
    }
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(127);
        execvp(argv[2], argv + 2);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0) {
        perror("cpu_run: wait4");
        return 2;
    }
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    printf("%.6f %ld %d\n", cpu, ru.ru_maxrss, rc);
    return 0;
}
