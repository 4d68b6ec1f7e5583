/* ffi_frame.c - the call-frame helpers shared by mbdcp's XLA FFI handlers (see ffi_frame.h). */
#include "ffi_frame.h"

#include <pthread.h> /* the per-thread workspace */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A thread's workspace, reached through a thread-specific key created once per process. */
typedef struct {
    size_t bytes;
    void *block;
} Workspace;

static pthread_once_t workspace_once = PTHREAD_ONCE_INIT;
static pthread_key_t workspace_key;
static int workspace_key_made;

static void workspace_free(void *p)
{
    Workspace *w = (Workspace *)p;
    free(w->block);
    free(w);
}

static void workspace_key_create(void)
{
    workspace_key_made = pthread_key_create(&workspace_key, workspace_free) == 0;
}

void *mbdcp_xla_workspace(size_t bytes)
{
    if (pthread_once(&workspace_once, workspace_key_create) != 0 || !workspace_key_made) return NULL;
    Workspace *w = (Workspace *)pthread_getspecific(workspace_key);
    if (!w) {
        w = (Workspace *)calloc(1, sizeof *w);
        if (!w) return NULL;
        if (pthread_setspecific(workspace_key, w) != 0) {
            free(w);
            return NULL;
        }
    }
    if (w->bytes < bytes) {
        free(w->block);
        w->block = malloc(bytes > 0 ? bytes : 1);
        w->bytes = w->block ? bytes : 0;
    }
    return w->block;
}

MbdcpXlaError *mbdcp_xla_error(const MbdcpXlaCallFrame *frame, int errc, const char *message)
{
    MbdcpXlaErrorArgs args;
    args.struct_size = MBDCP_XLA_ERROR_ARGS_SIZE;
    args.extension_start = NULL;
    args.message = message;
    args.errc = errc;
    return frame->api->error_create(&args);
}

/* The registration's query: which FFI version the handler was built for (XLA refuses a
 * mismatch). Nothing else is asked of it; the api table is NULL here, so a bad size cannot be
 * reported as an error and leaves the version unset (0.0), which registration refuses. */
static MbdcpXlaError *metadata(MbdcpXlaCallFrame *frame)
{
    MbdcpXlaMetadataExtension *ext = (MbdcpXlaMetadataExtension *)frame->extension_start;
    if (ext->extension_base.struct_size < MBDCP_XLA_METADATA_EXTENSION_SIZE || !ext->metadata ||
        ext->metadata->struct_size < MBDCP_XLA_METADATA_SIZE)
        return NULL;
    MbdcpXlaMetadata *m = ext->metadata;
    m->api_version.struct_size = MBDCP_XLA_VERSION_SIZE;
    m->api_version.extension_start = NULL;
    m->api_version.major_version = MBDCP_XLA_FFI_MAJOR;
    m->api_version.minor_version = MBDCP_XLA_FFI_MINOR;
    m->traits = 0;
    if (m->struct_size >= MBDCP_XLA_SIZE(MbdcpXlaMetadata, state_type_id)) m->state_type_id = 0; /* stateless */
    return NULL;
}

int mbdcp_xla_preamble(MbdcpXlaCallFrame *frame, const char *who, MbdcpXlaError **result)
{
    *result = NULL;
    if (frame->extension_start && frame->extension_start->type == MBDCP_XLA_EXTENSION_METADATA) {
        *result = metadata(frame);
        return 1;
    }
    if (frame->struct_size < MBDCP_XLA_CALL_FRAME_SIZE) {
        char message[160];
        snprintf(message, sizeof message, "%s: XLA's call frame is older than its FFI version", who);
        *result = mbdcp_xla_error(frame, MBDCP_XLA_INVALID_ARGUMENT, message);
        return 1;
    }
    return frame->stage != MBDCP_XLA_STAGE_EXECUTE; /* registered for execution only */
}

const MbdcpXlaBuffer *mbdcp_xla_f64_buffer(int64_t size, const int *types, void *const *items, int64_t i,
                                           int64_t rank)
{
    if (i >= size || types[i] != MBDCP_XLA_ARG_BUFFER) return NULL;
    const MbdcpXlaBuffer *b = (const MbdcpXlaBuffer *)items[i];
    if (b->struct_size < MBDCP_XLA_BUFFER_SIZE || b->dtype != MBDCP_XLA_F64 || b->rank != rank) return NULL;
    return b;
}

/* The scalar attribute `name` as a double (ints converted); 1 if found. */
static int scalar_attr(const MbdcpXlaAttrs *attrs, const char *name, double *value)
{
    const size_t len = strlen(name);
    for (int64_t i = 0; i < attrs->size; ++i) {
        const MbdcpXlaByteSpan *key = attrs->names[i];
        if (attrs->types[i] != MBDCP_XLA_ATTR_SCALAR || key->len != len || memcmp(key->ptr, name, len) != 0) continue;
        const MbdcpXlaScalar *s = (const MbdcpXlaScalar *)attrs->attrs[i];
        if (s->dtype == MBDCP_XLA_F64) *value = *(const double *)s->value;
        else if (s->dtype == MBDCP_XLA_S32) *value = *(const int32_t *)s->value;
        else if (s->dtype == MBDCP_XLA_S64) *value = (double)*(const int64_t *)s->value;
        else return 0;
        return 1;
    }
    return 0;
}

const char *mbdcp_xla_lemke_settings(const MbdcpXlaAttrs *attrs, MbdcpLemkeSettings *s)
{
    double max_iter = 0.0, tol = 0.0;
    const char *msg = NULL;
    mbdcp_lemke_default_settings(s);
    if (!scalar_attr(attrs, "max_iter", &max_iter) || !scalar_attr(attrs, "tol", &tol))
        return "mbdcp's custom call needs the attributes max_iter and tol";
    if (!(max_iter >= 0.0 && max_iter < 2147483648.0)) return "max_iter must be in [0, 2^31)";
    s->max_pivots = (mbdcp_int)max_iter;
    if (tol > 0.0) s->tol = tol;
    return mbdcp_lemke_check_settings(s, &msg) == MBDCP_OK ? NULL : msg;
}

/* The names of mbdcp.Status, in MbdcpStatus order. */
static const char *status_name(MbdcpStatus s)
{
    static const char *const names[MBDCP_N_STATUSES] = {"SOLVED", "RAY_TERMINATION", "MAX_ITERATIONS",
                                                        "NUMERICAL_ERROR", "INTERRUPTED"};
    return (s >= 0 && (int)s < MBDCP_N_STATUSES) ? names[s] : "UNKNOWN";
}

MbdcpXlaError *mbdcp_xla_failure(const MbdcpXlaCallFrame *frame, const char *who, int64_t batch_rank,
                                 MbdcpStatus status, int64_t first, int64_t failed)
{
    if (failed == 0) return NULL;
    char where[96] = "", buf[320];
    if (batch_rank > 0) {
        int k = snprintf(where, sizeof where, " at instance %lld of the batch", (long long)first);
        if (failed > 1 && k > 0) snprintf(where + k, sizeof where - (size_t)k, " (%lld instances failed)", (long long)failed);
    }
    snprintf(buf, sizeof buf, "%s ended with status %s%s (%s): no solution to return or differentiate", who,
             status_name(status), where, mbdcp_status_message(status));
    return mbdcp_xla_error(frame, MBDCP_XLA_FAILED_PRECONDITION, buf);
}
