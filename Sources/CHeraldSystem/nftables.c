// libnftables, loaded when kernel enforcement is first used (docs/enforcement.md): a daemon that does not enforce
// never maps it, and a system without it gets a message naming the package instead of a daemon that cannot start.
#include "CHeraldSystem.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

struct nft_ctx;

static struct {
    int tried;
    void *handle;
    struct nft_ctx *(*ctx_new)(unsigned int flags);
    int (*buffer_output)(struct nft_ctx *ctx);
    int (*buffer_error)(struct nft_ctx *ctx);
    const char *(*get_output)(struct nft_ctx *ctx);
    const char *(*get_error)(struct nft_ctx *ctx);
    int (*run)(struct nft_ctx *ctx, const char *buffer);
    void (*ctx_free)(struct nft_ctx *ctx);
    char why[256];
} nft;

static void copy_text(char *destination, size_t size, const char *text) {
    if (size == 0) return;
    snprintf(destination, size, "%s", text ? text : "");
}

static int nft_load(void) {
    if (nft.tried) return nft.handle ? 0 : -1;
    nft.tried = 1;
    nft.handle = dlopen("libnftables.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nft.handle) {
        snprintf(nft.why, sizeof nft.why, "cannot load libnftables.so.1 (Debian package libnftables1): %s",
                 dlerror());
        return -1;
    }
    nft.ctx_new = (struct nft_ctx * (*)(unsigned int)) dlsym(nft.handle, "nft_ctx_new");
    nft.buffer_output = (int (*)(struct nft_ctx *))dlsym(nft.handle, "nft_ctx_buffer_output");
    nft.buffer_error = (int (*)(struct nft_ctx *))dlsym(nft.handle, "nft_ctx_buffer_error");
    nft.get_output = (const char *(*)(struct nft_ctx *))dlsym(nft.handle, "nft_ctx_get_output_buffer");
    nft.get_error = (const char *(*)(struct nft_ctx *))dlsym(nft.handle, "nft_ctx_get_error_buffer");
    nft.run = (int (*)(struct nft_ctx *, const char *))dlsym(nft.handle, "nft_run_cmd_from_buffer");
    nft.ctx_free = (void (*)(struct nft_ctx *))dlsym(nft.handle, "nft_ctx_free");
    if (!nft.ctx_new || !nft.buffer_output || !nft.buffer_error || !nft.get_output || !nft.get_error || !nft.run
        || !nft.ctx_free) {
        snprintf(nft.why, sizeof nft.why, "libnftables.so.1 lacks the functions of its documented API");
        dlclose(nft.handle);
        nft.handle = NULL;
        return -1;
    }
    return 0;
}

int herald_nft_run(const char *commands, char *output, size_t output_size, char *error, size_t error_size) {
    copy_text(output, output_size, "");
    copy_text(error, error_size, "");
    if (nft_load() != 0) {
        copy_text(error, error_size, nft.why);
        return -1;
    }
    struct nft_ctx *ctx = nft.ctx_new(0);
    if (!ctx) {
        copy_text(error, error_size, "libnftables could not make a context");
        return -1;
    }
    nft.buffer_output(ctx);
    nft.buffer_error(ctx);
    int status = nft.run(ctx, commands);
    copy_text(output, output_size, nft.get_output(ctx));
    copy_text(error, error_size, nft.get_error(ctx));
    nft.ctx_free(ctx);
    return status == 0 ? 0 : 1;
}
