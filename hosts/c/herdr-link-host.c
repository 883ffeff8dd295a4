/*
 * herdr-link-host: a line-oriented debugging host for the herdr-link C ABI.
 *
 * Reads one command per line on stdin and writes exactly one response line on stdout for each
 * command (blank lines and lines starting with '#' get no response). Responses are JSON. The
 * command language is described in hosts/c/README.md; in short:
 *
 *   version                          {"version":"X.Y.Z"}
 *   start <session>                  hl_session_start  -> {"ok":true}
 *   end <session>                    hl_session_end    -> {"ok":true}
 *   active <session>                 hl_is_active      -> {"active":true|false}
 *   call <request json>              hl_tool_call      -> the library's document, verbatim
 *   present <request json>           hl_presentation   -> the library's document, verbatim
 *   guard <session> <command...>     hl_bash_guard     -> {"verdict":N,"reason":"..."|null}
 *   guard-json <session> "<json string>"   the same, with the command as a JSON string literal
 *   guard-in <style> <session> <command...>  hl_bash_guard_in_style -> the same, the reason in
 *                                    the words of <style> (deferred, gateway or mcp)
 *   sleep <milliseconds>             pause the host    -> {"ok":true}
 *   help                             {"commands":[...]}
 *   quit                             stop reading (like end of input)
 *
 * <session> is a bare word (no whitespace, not starting with '"') or a JSON string literal.
 * A malformed command gets {"ok":false,"error":{"code":"HOST_USAGE","message":"HOST_USAGE: ..."}}
 * and the host goes on with the next line.
 *
 * Build (see hosts/c/Makefile):
 *   cc -std=c11 -Wall -Wextra -Werror -pedantic -I include hosts/c/herdr-link-host.c \
 *      -L target/release -lherdr_link -Wl,-rpath,"$PWD/target/release" -o herdr-link-host
 */

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "herdr_link.h"

#define HOST_NAME "herdr-link-host"

/* ---------------------------------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (at most n bytes available), or 0 if invalid. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp;
    size_t i;

    if (c < 0x80) {
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        cp = c & 0x1Fu;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        cp = c & 0x0Fu;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    if (len > n) {
        return 0;
    }
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0u) != 0x80u) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if ((len == 3 && cp < 0x800u) || (len == 4 && (cp < 0x10000u || cp > 0x10FFFFu)) ||
        (cp >= 0xD800u && cp <= 0xDFFFu)) {
        return 0;
    }
    return len;
}

/* Writes s as a JSON string literal. Invalid UTF-8 becomes U+FFFD, so the output stays JSON. */
static void put_json_string(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    size_t i = 0;

    fputc('"', out);
    while (i < n) {
        unsigned char c = p[i];
        size_t len;

        switch (c) {
        case '"':
            fputs("\\\"", out);
            i++;
            continue;
        case '\\':
            fputs("\\\\", out);
            i++;
            continue;
        case '\n':
            fputs("\\n", out);
            i++;
            continue;
        case '\r':
            fputs("\\r", out);
            i++;
            continue;
        case '\t':
            fputs("\\t", out);
            i++;
            continue;
        default:
            break;
        }
        if (c < 0x20 || c == 0x7F) {
            fprintf(out, "\\u%04x", (unsigned)c);
            i++;
            continue;
        }
        len = utf8_sequence(p + i, n - i);
        if (len == 0) {
            fputs("\\ufffd", out);
            i++;
            continue;
        }
        fwrite(p + i, 1, len, out);
        i += len;
    }
    fputc('"', out);
}

/* Prints a HOST_USAGE error line: "HOST_USAGE: <verb>: <detail>" (or without the verb). */
static void usage_error(const char *verb, const char *detail)
{
    const char *sep = verb != NULL ? ": " : "";
    size_t need;
    char *text;

    if (verb == NULL) {
        verb = "";
    }
    need = strlen("HOST_USAGE: ") + strlen(verb) + strlen(sep) + strlen(detail) + 1;
    text = malloc(need);
    fputs("{\"ok\":false,\"error\":{\"code\":\"HOST_USAGE\",\"message\":", stdout);
    if (text == NULL) {
        put_json_string(stdout, "HOST_USAGE: out of memory");
    } else {
        snprintf(text, need, "HOST_USAGE: %s%s%s", verb, sep, detail);
        put_json_string(stdout, text);
        free(text);
    }
    fputs("}}\n", stdout);
}

/* Prints a string the library returned, then releases it with hl_free. */
static void put_library_document(char *doc, const char *function)
{
    if (doc == NULL) {
        usage_error(function, "returned NULL (a library bug)");
        return;
    }
    fputs(doc, stdout);
    fputc('\n', stdout);
    hl_free(doc);
}

/* ---------------------------------------------------------------------------------------------
 * Input parsing
 * ------------------------------------------------------------------------------------------- */

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

static const char *skip_spaces(const char *p)
{
    while (is_space(*p)) {
        p++;
    }
    return p;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

static int read_hex4(const char *p, uint32_t *out)
{
    uint32_t v = 0;
    int i;

    for (i = 0; i < 4; i++) {
        int h = hex_value(p[i]);
        if (h < 0) {
            return -1;
        }
        v = (v << 4) | (uint32_t)h;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *dst, uint32_t cp)
{
    if (cp < 0x80u) {
        dst[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800u) {
        dst[0] = (char)(0xC0u | (cp >> 6));
        dst[1] = (char)(0x80u | (cp & 0x3Fu));
        return 2;
    }
    if (cp < 0x10000u) {
        dst[0] = (char)(0xE0u | (cp >> 12));
        dst[1] = (char)(0x80u | ((cp >> 6) & 0x3Fu));
        dst[2] = (char)(0x80u | (cp & 0x3Fu));
        return 3;
    }
    dst[0] = (char)(0xF0u | (cp >> 18));
    dst[1] = (char)(0x80u | ((cp >> 12) & 0x3Fu));
    dst[2] = (char)(0x80u | ((cp >> 6) & 0x3Fu));
    dst[3] = (char)(0x80u | (cp & 0x3Fu));
    return 4;
}

/*
 * Decodes the JSON string literal at p (which starts with '"'). On success returns a malloc'ed
 * NUL-terminated string and sets *end just past the closing quote. On failure returns NULL and
 * sets *error. "\u0000" is refused: a C string cannot carry it.
 */
static char *decode_json_string(const char *p, const char **end, const char **error)
{
    size_t cap = strlen(p) + 1; /* decoding never grows the text */
    char *out = malloc(cap);
    size_t n = 0;

    if (out == NULL) {
        *error = "out of memory";
        return NULL;
    }
    p++; /* opening quote */
    for (;;) {
        unsigned char c = (unsigned char)*p;

        if (c == '\0') {
            *error = "unterminated JSON string";
            goto fail;
        }
        if (c == '"') {
            p++;
            break;
        }
        if (c < 0x20) {
            *error = "control character inside a JSON string";
            goto fail;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            p++;
            continue;
        }
        p++;
        switch (*p) {
        case '"':
        case '\\':
        case '/':
            out[n++] = *p;
            p++;
            break;
        case 'b':
            out[n++] = '\b';
            p++;
            break;
        case 'f':
            out[n++] = '\f';
            p++;
            break;
        case 'n':
            out[n++] = '\n';
            p++;
            break;
        case 'r':
            out[n++] = '\r';
            p++;
            break;
        case 't':
            out[n++] = '\t';
            p++;
            break;
        case 'u': {
            uint32_t cp;
            if (read_hex4(p + 1, &cp) != 0) {
                *error = "bad \\u escape in a JSON string";
                goto fail;
            }
            p += 5;
            if (cp >= 0xD800u && cp <= 0xDBFFu) {
                uint32_t low;
                if (p[0] != '\\' || p[1] != 'u' || read_hex4(p + 2, &low) != 0 || low < 0xDC00u ||
                    low > 0xDFFFu) {
                    *error = "unpaired surrogate in a JSON string";
                    goto fail;
                }
                p += 6;
                cp = 0x10000u + ((cp - 0xD800u) << 10) + (low - 0xDC00u);
            } else if (cp >= 0xDC00u && cp <= 0xDFFFu) {
                *error = "unpaired surrogate in a JSON string";
                goto fail;
            }
            if (cp == 0) {
                *error = "\\u0000 cannot be passed as a C string";
                goto fail;
            }
            /* Six escape bytes always yield at most four UTF-8 bytes: no overflow. */
            n += put_utf8(out + n, cp);
            break;
        }
        default:
            *error = "bad escape in a JSON string";
            goto fail;
        }
    }
    out[n] = '\0';
    *end = p;
    return out;

fail:
    free(out);
    return NULL;
}

/*
 * Reads a session argument at p: a JSON string literal or a bare word. Returns a malloc'ed
 * string and sets *rest to the text after it (spaces skipped), or NULL with *error set.
 */
static char *read_session(const char *p, const char **rest, const char **error)
{
    char *key;

    p = skip_spaces(p);
    if (*p == '\0') {
        *error = "missing <session>";
        return NULL;
    }
    if (*p == '"') {
        const char *end;
        key = decode_json_string(p, &end, error);
        if (key == NULL) {
            return NULL;
        }
        if (*end != '\0' && !is_space(*end)) {
            free(key);
            *error = "text right after the closing quote of <session>";
            return NULL;
        }
        p = end;
    } else {
        const char *start = p;
        size_t len;
        while (*p != '\0' && !is_space(*p)) {
            p++;
        }
        len = (size_t)(p - start);
        key = malloc(len + 1);
        if (key == NULL) {
            *error = "out of memory";
            return NULL;
        }
        memcpy(key, start, len);
        key[len] = '\0';
    }
    *rest = skip_spaces(p);
    return key;
}

/* ---------------------------------------------------------------------------------------------
 * Commands
 * ------------------------------------------------------------------------------------------- */

static void cmd_session(const char *verb, const char *args)
{
    const char *rest;
    const char *error = NULL;
    char *key = read_session(args, &rest, &error);

    if (key == NULL) {
        usage_error(verb, error);
        return;
    }
    if (*rest != '\0') {
        free(key);
        usage_error(verb, "unexpected text after <session>");
        return;
    }
    if (strcmp(verb, "start") == 0) {
        hl_session_start(key);
        fputs("{\"ok\":true}\n", stdout);
    } else if (strcmp(verb, "end") == 0) {
        hl_session_end(key);
        fputs("{\"ok\":true}\n", stdout);
    } else {
        int32_t active = hl_is_active(key);
        fputs(active == 1 ? "{\"active\":true}\n" : "{\"active\":false}\n", stdout);
    }
    free(key);
}

static void put_verdict(int32_t verdict, char *reason)
{
    fprintf(stdout, "{\"verdict\":%ld,\"reason\":", (long)verdict);
    if (reason != NULL) {
        put_json_string(stdout, reason);
        hl_free(reason);
    } else {
        fputs("null", stdout);
    }
    fputs("}\n", stdout);
}

static void cmd_guard(const char *verb, const char *args, int json_command)
{
    const char *rest;
    const char *error = NULL;
    char *key = read_session(args, &rest, &error);
    char *reason = NULL;
    int32_t verdict;

    if (key == NULL) {
        usage_error(verb, error);
        return;
    }
    if (json_command) {
        const char *end;
        char *command;
        if (*rest != '"') {
            free(key);
            usage_error(verb, "<command> must be a JSON string literal");
            return;
        }
        command = decode_json_string(rest, &end, &error);
        if (command == NULL) {
            free(key);
            usage_error(verb, error);
            return;
        }
        if (*skip_spaces(end) != '\0') {
            free(command);
            free(key);
            usage_error(verb, "unexpected text after <command>");
            return;
        }
        verdict = hl_bash_guard(key, command, &reason);
        free(command);
    } else {
        verdict = hl_bash_guard(key, rest, &reason);
    }
    put_verdict(verdict, reason);
    free(key);
}

static void cmd_guard_in(const char *args)
{
    const char *rest;
    const char *after_key;
    const char *error = NULL;
    char *style = read_session(args, &rest, &error);
    char *key;
    char *reason = NULL;
    int32_t verdict;

    if (style == NULL) {
        usage_error("guard-in", "missing or malformed <style>");
        return;
    }
    key = read_session(rest, &after_key, &error);
    if (key == NULL) {
        free(style);
        usage_error("guard-in", error);
        return;
    }
    verdict = hl_bash_guard_in_style(key, after_key, style, &reason);
    put_verdict(verdict, reason);
    free(key);
    free(style);
}

static void cmd_sleep(const char *args)
{
    char *end;
    long ms;
    struct timespec ts;

    errno = 0;
    ms = strtol(args, &end, 10);
    if (end == args || *skip_spaces(end) != '\0' || errno != 0 || ms < 0 || ms > 3600000L) {
        usage_error("sleep", "<milliseconds> must be an integer from 0 to 3600000");
        return;
    }
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    fputs("{\"ok\":true}\n", stdout);
}

static void cmd_help(void)
{
    fputs("{\"commands\":[\"version\",\"start <session>\",\"end <session>\",\"active <session>\","
          "\"call <request json>\",\"present <request json>\",\"guard <session> <command...>\","
          "\"guard-json <session> <json string>\",\"guard-in <style> <session> <command...>\",\"sleep <ms>\",\"help\",\"quit\"]}\n",
          stdout);
}

/* Runs one line (without its line ending). Returns 0 to go on, 1 to stop. */
static int run_line(const char *line)
{
    const char *p = skip_spaces(line);
    const char *verb = p;
    size_t verb_len;
    const char *args;

    if (*p == '\0' || *p == '#') {
        return 0;
    }
    while (*p != '\0' && !is_space(*p)) {
        p++;
    }
    verb_len = (size_t)(p - verb);
    args = skip_spaces(p);

#define VERB_IS(name) (verb_len == sizeof(name) - 1 && memcmp(verb, name, verb_len) == 0)
    if (VERB_IS("call")) {
        put_library_document(hl_tool_call(args), "hl_tool_call");
    } else if (VERB_IS("present")) {
        put_library_document(hl_presentation(args), "hl_presentation");
    } else if (VERB_IS("guard")) {
        cmd_guard("guard", args, 0);
    } else if (VERB_IS("guard-json")) {
        cmd_guard("guard-json", args, 1);
    } else if (VERB_IS("guard-in")) {
        cmd_guard_in(args);
    } else if (VERB_IS("start")) {
        cmd_session("start", args);
    } else if (VERB_IS("end")) {
        cmd_session("end", args);
    } else if (VERB_IS("active")) {
        cmd_session("active", args);
    } else if (VERB_IS("version")) {
        if (*args != '\0') {
            usage_error("version", "takes no arguments");
        } else {
            fputs("{\"version\":", stdout);
            put_json_string(stdout, hl_version());
            fputs("}\n", stdout);
        }
    } else if (VERB_IS("sleep")) {
        cmd_sleep(args);
    } else if (VERB_IS("help")) {
        cmd_help();
    } else if (VERB_IS("quit")) {
        return 1;
    } else {
        size_t shown = verb_len > 64 ? 64 : verb_len;
        char *name = malloc(shown + 1);
        if (name == NULL) {
            usage_error(NULL, "unknown command");
        } else {
            memcpy(name, verb, shown);
            name[shown] = '\0';
            usage_error("unknown command", name);
            free(name);
        }
    }
#undef VERB_IS
    return 0;
}

static void print_usage(FILE *out)
{
    fputs("usage: " HOST_NAME " [--help | --version]\n"
          "Reads one command per line on stdin and prints one JSON line per command.\n"
          "Commands: version | start S | end S | active S | call JSON | present JSON |\n"
          "          guard S COMMAND... | guard-json S \"JSON STRING\" | guard-in STYLE S COMMAND...\n"
          "          | sleep MS | help | quit\n"
          "The library sees the process environment: HERDR_ENV=1, HERDR_BIN_PATH and\n"
          "HERDR_PANE_ID must be set, or every call answers NOT_IN_HERDR.\n",
          out);
}

int main(int argc, char **argv)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int status = 0;

    if (argc > 1) {
        if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
            print_usage(stdout);
            return 0;
        }
        if (argc == 2 && strcmp(argv[1], "--version") == 0) {
            printf(HOST_NAME " (herdr-link %s)\n", hl_version());
            return 0;
        }
        print_usage(stderr);
        return 2;
    }

    errno = 0;
    while ((got = getline(&line, &cap, stdin)) != -1) {
        size_t len = (size_t)got;
        int stop;

        if (len > 0 && line[len - 1] == '\n') {
            line[--len] = '\0';
        }
        if (len > 0 && line[len - 1] == '\r') {
            line[--len] = '\0';
        }
        if (strlen(line) != len) {
            usage_error(NULL, "the line contains a NUL byte");
            stop = 0;
        } else {
            stop = run_line(line);
        }
        if (fflush(stdout) != 0) {
            perror(HOST_NAME ": stdout");
            status = 1;
            break;
        }
        if (stop) {
            break;
        }
        errno = 0;
    }
    if (got == -1 && errno != 0 && !feof(stdin)) {
        perror(HOST_NAME ": stdin");
        status = 1;
    }
    free(line);
    return status;
}
