/*
 * static_herdr: a Herdr CLI that keeps no state, for the argv floor of `cargo bench --bench abi
 * -- f` (BENCHMARKS.md, section (f)). It answers the argvs Herdr Link makes for peers, send and
 * close with the JSON the real Herdr 0.8 CLI prints (one compact line, keys sorted; the same
 * shape as the bundled fake-herdr), from a fixed world computed from the argv alone:
 *
 *   workspace w1, tab w1:t1:  brain (pi, w1:p1, focused), worker (claude, w1:p2),
 *                             victim (pi, w1:p3)
 *   workspace w2, tab w2:t1:  stranger (pi, w2:p1)
 *   and, so a bench can reach many receivers without state: `r<N>` (claude, w1, pane number
 *   16 + N) and `v<N>` (pi, w1, pane number 2000000 + N), 1 <= N <= 999999. `agent list` shows
 *   only the first four.
 *
 * Pane numbers are written in Herdr's bijective base 32 (`w1:pA` is pane 10). Commands:
 * `--version`, `agent get T`, `agent list`, `agent prompt T TEXT`, `agent rename T NAME|--clear`,
 * `pane get P`, `pane list --workspace W`, `pane close P`. Anything else is a usage error
 * (exit 2); an unknown target is Herdr's error JSON on stderr (exit 1).
 *
 * Built by the bench with `cc -O2 -static` (or `cc -O2` where no static libc exists).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char DIGITS[] = "123456789ABCDEFGHJKMNPQRSTVWXYZ0";

struct agent {
    const char *kind;   /* agent label */
    const char *status; /* agent_status */
    char name[16];      /* "" when unnamed */
    char ws[8];         /* w1 */
    char pane[32];      /* w1:p2 */
    char tab[16];       /* w1:t1 */
    unsigned long num;  /* pane number */
    int focused;
};

static char out[8192];
static size_t used;

static void put(const char *s) {
    size_t n = strlen(s);
    if (used + n < sizeof out) {
        memcpy(out + used, s, n);
        used += n;
    }
}

static void putf(const char *fmt, const char *a) {
    char b[512];
    snprintf(b, sizeof b, fmt, a);
    put(b);
}

static int emit(int fd, int code) {
    size_t off = 0;
    while (off < used) {
        ssize_t w = write(fd, out + off, used - off);
        if (w <= 0)
            return 1;
        off += (size_t)w;
    }
    return code;
}

/* Herdr's bijective base 32: 1 -> "1", 32 -> "0", 33 -> "11". */
static void encode(unsigned long n, char *dst) {
    char rev[16];
    int k = 0;
    while (n > 0) {
        unsigned long d = (n - 1) % 32;
        rev[k++] = DIGITS[d];
        n = (n - 1) / 32;
    }
    for (int i = 0; i < k; i++)
        dst[i] = rev[k - 1 - i];
    dst[k] = 0;
}

static unsigned long decode(const char *s) {
    unsigned long n = 0;
    if (!*s || strlen(s) > 8)
        return 0;
    for (; *s; s++) {
        const char *p = strchr(DIGITS, *s);
        if (!p)
            return 0;
        n = n * 32 + (unsigned long)(p - DIGITS) + 1;
    }
    return n;
}

/* A decimal 1..999999 after `prefix`, or 0. */
static unsigned long numbered(const char *s, char prefix) {
    if (s[0] != prefix || !s[1] || strlen(s) > 7)
        return 0;
    unsigned long n = 0;
    for (s++; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        n = n * 10 + (unsigned long)(*s - '0');
    }
    return n;
}

static int in_w1(unsigned long num, struct agent *a) {
    a->num = num;
    strcpy(a->ws, "w1");
    strcpy(a->tab, "w1:t1");
    strcpy(a->pane, "w1:p");
    encode(num, a->pane + 4);
    a->focused = num == 1;
    a->status = "idle";
    a->kind = "pi";
    if (num == 1) {
        strcpy(a->name, "brain");
    } else if (num == 2) {
        strcpy(a->name, "worker");
        a->kind = "claude";
        a->status = "working";
    } else if (num == 3) {
        strcpy(a->name, "victim");
    } else if (num >= 17 && num <= 16 + 999999) {
        snprintf(a->name, sizeof a->name, "r%lu", num - 16);
        a->kind = "claude";
    } else if (num >= 2000001 && num <= 2000000 + 999999) {
        snprintf(a->name, sizeof a->name, "v%lu", num - 2000000);
    } else {
        return 0;
    }
    return 1;
}

static int stranger(struct agent *a) {
    memset(a, 0, sizeof *a);
    a->num = 1;
    strcpy(a->ws, "w2");
    strcpy(a->tab, "w2:t1");
    strcpy(a->pane, "w2:p1");
    strcpy(a->name, "stranger");
    a->kind = "pi";
    a->status = "idle";
    return 1;
}

/* The agent a target names: an exact pane id or an exact name. */
static int find(const char *t, struct agent *a) {
    memset(a, 0, sizeof *a);
    if (strcmp(t, "w2:p1") == 0 || strcmp(t, "stranger") == 0)
        return stranger(a);
    if (strncmp(t, "w1:p", 4) == 0)
        return in_w1(decode(t + 4), a);
    if (strcmp(t, "brain") == 0)
        return in_w1(1, a);
    if (strcmp(t, "worker") == 0)
        return in_w1(2, a);
    if (strcmp(t, "victim") == 0)
        return in_w1(3, a);
    unsigned long n;
    if ((n = numbered(t, 'r')) > 0)
        return in_w1(16 + n, a);
    if ((n = numbered(t, 'v')) > 0)
        return in_w1(2000000 + n, a);
    return 0;
}

static void cwd(const struct agent *a) {
    const char *c = strcmp(a->ws, "w2") == 0 ? "/other" : "/proj";
    putf("\"cwd\":\"%s\",", c);
    put(a->focused ? "\"focused\":true," : "\"focused\":false,");
    putf("\"foreground_cwd\":\"%s\",", c);
}

static void terminal(const struct agent *a) {
    char b[64];
    snprintf(b, sizeof b, "\"terminal_id\":\"term_661b5d%s%08lx\",",
             strcmp(a->ws, "w2") == 0 ? "42" : "33", a->num);
    put(b);
}

/* AgentInfo, keys sorted. */
static void agent_info(const struct agent *a, int revision) {
    char b[64];
    putf("{\"agent\":\"%s\",", a->kind);
    putf("\"agent_status\":\"%s\",", a->status);
    cwd(a);
    if (a->name[0])
        putf("\"name\":\"%s\",", a->name);
    putf("\"pane_id\":\"%s\",", a->pane);
    snprintf(b, sizeof b, "\"revision\":%d,\"state_change_seq\":0,", revision);
    put(b);
    putf("\"tab_id\":\"%s\",", a->tab);
    terminal(a);
    putf("\"workspace_id\":\"%s\"}", a->ws);
}

/* PaneInfo, keys sorted. */
static void pane_info(const struct agent *a) {
    putf("{\"agent\":\"%s\",", a->kind);
    putf("\"agent_status\":\"%s\",", a->status);
    cwd(a);
    putf("\"pane_id\":\"%s\",", a->pane);
    put("\"revision\":0,\"scroll\":{\"max_offset_from_bottom\":0,\"offset_from_bottom\":0,"
        "\"viewport_rows\":40},");
    putf("\"tab_id\":\"%s\",", a->tab);
    terminal(a);
    putf("\"workspace_id\":\"%s\"}", a->ws);
}

static int usage(const char *text) {
    used = 0;
    put(text);
    put("\n");
    return emit(2, 2);
}

static int fail(const char *id, const char *code, const char *message, const char *arg) {
    char m[512];
    snprintf(m, sizeof m, message, arg);
    used = 0;
    putf("{\"error\":{\"code\":\"%s\",", code);
    putf("\"message\":\"%s\"},", m);
    putf("\"id\":\"%s\"}\n", id);
    return emit(2, 1);
}

static int agent(int argc, char **argv) {
    struct agent a;
    const char *verb = argc > 0 ? argv[0] : "";
    if (strcmp(verb, "list") == 0) {
        if (argc != 1)
            return usage("usage: herdr agent list");
        put("{\"id\":\"cli:agent:list\",\"result\":{\"agents\":[");
        for (unsigned long k = 1; k <= 3; k++) {
            in_w1(k, &a);
            agent_info(&a, 0);
            put(",");
        }
        stranger(&a);
        agent_info(&a, 0);
        put("],\"type\":\"agent_list\"}}\n");
        return emit(1, 0);
    }
    if (strcmp(verb, "get") == 0) {
        if (argc != 2)
            return usage("usage: herdr agent get <target>");
        if (!find(argv[1], &a))
            return fail("cli:agent:get", "agent_not_found", "agent target %s not found", argv[1]);
        put("{\"id\":\"cli:agent:get\",\"result\":{\"agent\":");
        agent_info(&a, 0);
        put(",\"type\":\"agent_info\"}}\n");
        return emit(1, 0);
    }
    if (strcmp(verb, "prompt") == 0) {
        if (argc < 2)
            return usage("usage: herdr agent prompt <target> <text> [--wait] [--until STATUS]... "
                         "[--timeout MS]");
        if (argc != 3)
            return usage(argc == 2 ? "agent prompt requires text" : "unknown option");
        if (!argv[2][0])
            return fail("cli:agent:prompt", "empty_agent_prompt", "agent prompt must not be empty%s",
                        "");
        if (!find(argv[1], &a))
            return fail("cli:agent:prompt", "agent_not_found", "agent target %s not found", argv[1]);
        put("{\"id\":\"cli:agent:prompt\",\"result\":{\"agent\":");
        agent_info(&a, 1);
        put(",\"type\":\"agent_prompted\"}}\n");
        return emit(1, 0);
    }
    if (strcmp(verb, "rename") == 0) {
        if (argc != 3)
            return usage("usage: herdr agent rename <target> <name>|--clear");
        if (!find(argv[1], &a))
            return fail("cli:agent:rename", "agent_not_found", "agent target %s not found", argv[1]);
        const char *n = argv[2];
        if (strcmp(n, "--clear") == 0) {
            a.name[0] = 0;
        } else {
            size_t len = strlen(n);
            int ok = len >= 1 && len <= 32 && n[0] >= 'a' && n[0] <= 'z';
            for (size_t i = 1; ok && i < len; i++)
                ok = (n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '-' ||
                     n[i] == '_';
            if (!ok)
                return fail("cli:agent:rename", "invalid_agent_name",
                            "agent name must start with a lowercase letter and contain only "
                            "lowercase letters, digits, '-' or '_' (1-32 characters)%s",
                            "");
            if (len >= sizeof a.name)
                len = sizeof a.name - 1;
            memcpy(a.name, n, len);
            a.name[len] = 0;
        }
        put("{\"id\":\"cli:agent:rename\",\"result\":{\"agent\":");
        agent_info(&a, 1);
        put(",\"type\":\"agent_info\"}}\n");
        return emit(1, 0);
    }
    return usage("usage: herdr agent <get|list|prompt|rename> ...");
}

static int pane(int argc, char **argv) {
    struct agent a;
    const char *verb = argc > 0 ? argv[0] : "";
    if (strcmp(verb, "get") == 0 || strcmp(verb, "close") == 0) {
        int get = verb[0] == 'g';
        if (argc != 2)
            return usage(get ? "usage: herdr pane get <pane>" : "usage: herdr pane close <pane>");
        int known = strncmp(argv[1], "w1:p", 4) == 0 || strcmp(argv[1], "w2:p1") == 0;
        if (!known || !find(argv[1], &a))
            return fail(get ? "cli:pane:get" : "cli:pane:close", "pane_not_found",
                        "pane %s not found", argv[1]);
        if (!get) {
            put("{\"id\":\"cli:pane:close\",\"result\":{\"type\":\"ok\"}}\n");
            return emit(1, 0);
        }
        put("{\"id\":\"cli:pane:get\",\"result\":{\"pane\":");
        pane_info(&a);
        put(",\"type\":\"pane_info\"}}\n");
        return emit(1, 0);
    }
    if (strcmp(verb, "list") == 0) {
        if (argc != 3 || strcmp(argv[1], "--workspace") != 0)
            return usage("usage: herdr pane list --workspace <id>");
        put("{\"id\":\"cli:pane:list\",\"result\":{\"panes\":[");
        if (strcmp(argv[2], "w1") == 0) {
            for (unsigned long k = 1; k <= 3; k++) {
                in_w1(k, &a);
                if (k > 1)
                    put(",");
                pane_info(&a);
            }
        } else if (strcmp(argv[2], "w2") == 0) {
            stranger(&a);
            pane_info(&a);
        } else {
            return fail("cli:pane:list", "workspace_not_found", "workspace %s not found", argv[2]);
        }
        put("],\"type\":\"pane_list\"}}\n");
        return emit(1, 0);
    }
    return usage("usage: herdr pane <get|list|close> ...");
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        put("herdr 0.8.0\n");
        return emit(1, 0);
    }
    if (argc >= 2 && strcmp(argv[1], "agent") == 0)
        return agent(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "pane") == 0)
        return pane(argc - 2, argv + 2);
    return usage("static_herdr: only --version, agent get|list|prompt|rename, pane get|list|close");
}
