/* DNSServiceConstructFullName: "<instance>.<type>.<domain>." in the escaped presentation form the API
 * uses, with dots and backslashes in the instance escaped and control characters and spaces written
 * as \DDD (RFC 6763 §4.3). */
#include <string.h>

#include "internal.h"

struct name_writer {
    char *at;
    char *limit; /* one past the last byte a character may use; the NUL goes at most at limit */
    int failed;
};

static void put(struct name_writer *w, char c) {
    if (w->at >= w->limit) {
        w->failed = 1;
        return;
    }
    *w->at++ = c;
}

static void put_escaped_instance(struct name_writer *w, const char *instance) {
    for (const unsigned char *c = (const unsigned char *)instance; *c; c++) {
        if (*c == '.' || *c == '\\') {
            put(w, '\\');
            put(w, (char)*c);
        } else if (*c <= ' ' || *c == 0x7F) {
            put(w, '\\');
            put(w, (char)('0' + *c / 100));
            put(w, (char)('0' + *c / 10 % 10));
            put(w, (char)('0' + *c % 10));
        } else {
            put(w, (char)*c);
        }
    }
    put(w, '.');
}

/* A name already in presentation form, ending with exactly one dot. */
static void put_name(struct name_writer *w, const char *name) {
    size_t length = strlen(name);
    for (size_t i = 0; i < length; i++) put(w, name[i]);
    int escaped_final_dot = length >= 2 && name[length - 2] == '\\';
    if (length == 0 || name[length - 1] != '.' || escaped_final_dot) put(w, '.');
}

int DNSServiceConstructFullName(char *fullName, const char *service, const char *regtype, const char *domain) {
    if (!fullName || !regtype || !*regtype || !domain) return -1;
    struct name_writer w = {.at = fullName, .limit = fullName + HERALD_MAX_DOMAIN_NAME - 1};
    if (service && *service) put_escaped_instance(&w, service);
    put_name(&w, regtype);
    if (*domain && strcmp(domain, ".") != 0) put_name(&w, domain);
    if (w.failed) {
        fullName[0] = '\0';
        return -1;
    }
    *w.at = '\0';
    return 0;
}
