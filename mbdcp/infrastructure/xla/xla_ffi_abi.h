/*
 * xla_ffi_abi.h - the part of XLA's FFI binary interface (custom calls, "api_version 1" of
 * jax.ffi.register_ffi_target) that mbdcp's handlers use, declared here so that the handlers
 * build without JAX installed (pip builds in an isolated environment, without jaxlib).
 *
 * These are declarations of the layout XLA documents for FFI version 0.3 (its header
 * xla/ffi/api/c_api.h, shipped with jaxlib as jax.ffi.include_dir()): every struct that crosses
 * the interface starts with its size, fields are only ever appended, and a handler reports the
 * version it was built for, which XLA checks when the handler is registered. A test compares
 * each size and offset below with jaxlib's header when both are at hand.
 *
 * Only what a synchronous CPU handler reads is declared: the call frame, buffers, scalar
 * attributes, the error constructor and the metadata query. Enumerations are plain ints (a C
 * enum's size); the XLA_FFI_Api table is only reached through a pointer, up to its first entry.
 */
#ifndef MBDCP_XLA_FFI_ABI_H
#define MBDCP_XLA_FFI_ABI_H

#include <stddef.h>
#include <stdint.h>

/* The FFI version these declarations follow (major, minor). */
#define MBDCP_XLA_FFI_MAJOR 0
#define MBDCP_XLA_FFI_MINOR 3

/* Size of a struct up to and including `last`: what XLA stores in struct_size. */
#define MBDCP_XLA_SIZE(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

enum { MBDCP_XLA_EXTENSION_METADATA = 1 };
enum { MBDCP_XLA_STAGE_EXECUTE = 3 };
enum { MBDCP_XLA_ARG_BUFFER = 1, MBDCP_XLA_RET_BUFFER = 1 };
enum { MBDCP_XLA_ATTR_SCALAR = 3 };
/* xla::PrimitiveType numbers of the element types used */
enum { MBDCP_XLA_S32 = 4, MBDCP_XLA_S64 = 5, MBDCP_XLA_F64 = 12 };
/* absl status codes */
enum { MBDCP_XLA_INVALID_ARGUMENT = 3, MBDCP_XLA_FAILED_PRECONDITION = 9, MBDCP_XLA_RESOURCE_EXHAUSTED = 8 };

typedef struct MbdcpXlaExtension {
    size_t struct_size;
    int type;
    struct MbdcpXlaExtension *next;
} MbdcpXlaExtension;

typedef struct {
    size_t struct_size;
    MbdcpXlaExtension *extension_start;
    int major_version;
    int minor_version;
} MbdcpXlaVersion;

typedef struct MbdcpXlaError MbdcpXlaError; /* opaque, owned by XLA once returned */

typedef struct {
    size_t struct_size;
    MbdcpXlaExtension *extension_start;
    const char *message; /* copied by XLA */
    int errc;
} MbdcpXlaErrorArgs;

typedef struct {
    size_t struct_size;
    MbdcpXlaExtension *extension_start;
    MbdcpXlaVersion api_version;
    const void *internal_api;
    MbdcpXlaError *(*error_create)(MbdcpXlaErrorArgs *args);
    /* further entries not used */
} MbdcpXlaApi;

typedef struct {
    size_t struct_size;
    MbdcpXlaExtension *extension_start;
    int dtype;
    void *data;
    int64_t rank;
    int64_t *dims; /* rank entries */
} MbdcpXlaBuffer;

typedef struct {
    const char *ptr; /* not NUL-terminated */
    size_t len;
} MbdcpXlaByteSpan;

typedef struct {
    int dtype;
    void *value;
} MbdcpXlaScalar;

typedef struct {
    size_t struct_size;
    MbdcpXlaExtension *extension_start;
    int64_t size;
    int *types;  /* size entries */
    void **args; /* size entries: MbdcpXlaBuffer * for buffers */
} MbdcpXlaArgs;

typedef struct {
    size_t struct_size;
    MbdcpXlaExtension *extension_start;
    int64_t size;
    int *types;
    void **rets;
} MbdcpXlaRets;

typedef struct {
    size_t struct_size;
    MbdcpXlaExtension *extension_start;
    int64_t size;
    int *types;
    MbdcpXlaByteSpan **names; /* sorted by name */
    void **attrs;             /* MbdcpXlaScalar * for scalars */
} MbdcpXlaAttrs;

typedef struct {
    size_t struct_size;
    MbdcpXlaExtension *extension_start;
    const MbdcpXlaApi *api; /* NULL in the metadata query */
    void *ctx;
    int stage;
    MbdcpXlaArgs args;
    MbdcpXlaRets rets;
    MbdcpXlaAttrs attrs;
    void *future; /* an asynchronous handler's completion; left NULL here */
} MbdcpXlaCallFrame;

typedef struct {
    size_t struct_size;
    MbdcpXlaVersion api_version;
    uint32_t traits;
    int64_t state_type_id; /* after the counted size: written only when struct_size covers it */
} MbdcpXlaMetadata;

typedef struct {
    MbdcpXlaExtension extension_base;
    MbdcpXlaMetadata *metadata;
} MbdcpXlaMetadataExtension;

#define MBDCP_XLA_VERSION_SIZE MBDCP_XLA_SIZE(MbdcpXlaVersion, minor_version)
#define MBDCP_XLA_ERROR_ARGS_SIZE MBDCP_XLA_SIZE(MbdcpXlaErrorArgs, errc)
#define MBDCP_XLA_BUFFER_SIZE MBDCP_XLA_SIZE(MbdcpXlaBuffer, dims)
#define MBDCP_XLA_CALL_FRAME_SIZE MBDCP_XLA_SIZE(MbdcpXlaCallFrame, attrs)
#define MBDCP_XLA_METADATA_SIZE MBDCP_XLA_SIZE(MbdcpXlaMetadata, traits)
#define MBDCP_XLA_METADATA_EXTENSION_SIZE MBDCP_XLA_SIZE(MbdcpXlaMetadataExtension, metadata)

/* The handler type XLA calls (one function for every stage it is registered for). */
typedef MbdcpXlaError *MbdcpXlaHandler(MbdcpXlaCallFrame *frame);

#endif /* MBDCP_XLA_FFI_ABI_H */
