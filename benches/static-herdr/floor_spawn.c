/*
 * floor_spawn BIN: the bare argv floor of `cargo bench --bench abi -- f` (BENCHMARKS.md,
 * section (f)). Reads requests on stdin; each is a sequence of argvs for BIN, every argument
 * NUL-terminated, every argv ended by an empty argument, the sequence ended by an empty argv.
 * For each request it spawns the argvs one after the other with posix_spawn (stdin and stderr
 * /dev/null, stdout a pipe read to its end), waits for each with waitpid, and writes one line:
 * the nanoseconds the whole sequence took, or `ERR <why>` if a spawn failed or a child did not
 * exit 0. Nothing else: no parsing, no bookkeeping — the least any caller of Herdr's CLI does.
 *
 * Built by the bench with `cc -O2 -static` (or `cc -O2` where no static libc exists).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_ARGS 16
#define MAX_ARGVS 8

/* One NUL-terminated argument from stdin into a malloc'd string; NULL at EOF. */
static char *read_arg(void) {
    size_t cap = 64, n = 0;
    char *s = malloc(cap);
    int c;
    while ((c = getchar()) != EOF) {
        if (n + 1 >= cap) {
            cap *= 2;
            s = realloc(s, cap);
        }
        if (c == 0) {
            s[n] = 0;
            return s;
        }
        s[n++] = (char)c;
    }
    free(s);
    return NULL;
}

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Spawns one argv, reads its stdout to the end, waits; 0 if it exited 0. */
static int run(char **argv, char *why, size_t why_len) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(why, why_len, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        snprintf(why, why_len, "posix_spawn %s: %s", argv[0], strerror(rc));
        return -1;
    }
    char buf[65536];
    size_t total = 0;
    for (;;) {
        ssize_t r = read(p[0], buf, sizeof buf);
        if (r > 0) {
            total += (size_t)r;
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        break;
    }
    close(p[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            snprintf(why, why_len, "waitpid: %s", strerror(errno));
            return -1;
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || total == 0) {
        snprintf(why, why_len, "%s %s: status %d, %zu bytes out", argv[1], argv[2] ? argv[2] : "",
                 status, total);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: floor_spawn HERDR_BIN < requests\n");
        return 2;
    }
    char *seq[MAX_ARGVS][MAX_ARGS + 2];
    for (;;) {
        int argvs = 0, args = 1;
        for (;;) {
            char *a = read_arg();
            if (!a)
                return 0;
            if (a[0]) {
                if (args < MAX_ARGS + 1 && argvs < MAX_ARGVS)
                    seq[argvs][args++] = a;
                continue;
            }
            free(a);
            if (args == 1)
                break; /* an empty argv: the sequence is complete */
            if (argvs < MAX_ARGVS) {
                seq[argvs][0] = argv[1];
                seq[argvs][args] = NULL;
                argvs++;
            }
            args = 1;
        }
        char why[512] = "";
        long long t = now_ns();
        int ok = 1;
        for (int k = 0; k < argvs && ok; k++)
            ok = run(seq[k], why, sizeof why) == 0;
        long long took = now_ns() - t;
        if (ok)
            printf("%lld\n", took);
        else
            printf("ERR %s\n", why);
        fflush(stdout);
        for (int k = 0; k < argvs; k++)
            for (int j = 1; seq[k][j]; j++)
                free(seq[k][j]);
    }
}
