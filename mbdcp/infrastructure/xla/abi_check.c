/*
 * abi_check.c - compiles only if xla_ffi_abi.h declares the layout of jaxlib's XLA FFI header
 * (include it with -I$(python -c "import jax.ffi; print(jax.ffi.include_dir())")). Not part of
 * any build: tests/test_jax_ffi.py compiles it when a C compiler and jaxlib are at hand.
 */
#include "xla/ffi/api/c_api.h"
#include "xla_ffi_abi.h"

#define SAME_SIZE(ours, theirs) _Static_assert(sizeof(ours) == sizeof(theirs), #ours " has the size of " #theirs)
#define SAME_FIELD(ours, a, theirs, b)                                                                          \
    _Static_assert(offsetof(ours, a) == offsetof(theirs, b) && sizeof(((ours *)0)->a) == sizeof(((theirs *)0)->b), \
                   #ours "." #a " lies where " #theirs "." #b " does")

_Static_assert(MBDCP_XLA_FFI_MAJOR == XLA_FFI_API_MAJOR && MBDCP_XLA_FFI_MINOR == XLA_FFI_API_MINOR,
               "the FFI version declared is jaxlib's");
#define SAME_VALUE(ours, theirs) _Static_assert((int)(ours) == (int)(theirs), #ours " is " #theirs)
SAME_VALUE(MBDCP_XLA_EXTENSION_METADATA, XLA_FFI_Extension_Metadata);
SAME_VALUE(MBDCP_XLA_STAGE_EXECUTE, XLA_FFI_ExecutionStage_EXECUTE);
SAME_VALUE(MBDCP_XLA_ARG_BUFFER, XLA_FFI_ArgType_BUFFER);
SAME_VALUE(MBDCP_XLA_RET_BUFFER, XLA_FFI_RetType_BUFFER);
SAME_VALUE(MBDCP_XLA_ATTR_SCALAR, XLA_FFI_AttrType_SCALAR);
SAME_VALUE(MBDCP_XLA_S32, XLA_FFI_DataType_S32);
SAME_VALUE(MBDCP_XLA_S64, XLA_FFI_DataType_S64);
SAME_VALUE(MBDCP_XLA_F64, XLA_FFI_DataType_F64);
SAME_VALUE(MBDCP_XLA_INVALID_ARGUMENT, XLA_FFI_Error_Code_INVALID_ARGUMENT);
SAME_VALUE(MBDCP_XLA_FAILED_PRECONDITION, XLA_FFI_Error_Code_FAILED_PRECONDITION);
SAME_VALUE(MBDCP_XLA_RESOURCE_EXHAUSTED, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED);

SAME_SIZE(MbdcpXlaExtension, XLA_FFI_Extension_Base);
SAME_FIELD(MbdcpXlaExtension, type, XLA_FFI_Extension_Base, type);
SAME_FIELD(MbdcpXlaExtension, next, XLA_FFI_Extension_Base, next);

SAME_SIZE(MbdcpXlaVersion, XLA_FFI_Api_Version);
SAME_FIELD(MbdcpXlaVersion, minor_version, XLA_FFI_Api_Version, minor_version);
_Static_assert(MBDCP_XLA_VERSION_SIZE == XLA_FFI_Api_Version_STRUCT_SIZE, "version size");

SAME_SIZE(MbdcpXlaErrorArgs, XLA_FFI_Error_Create_Args);
SAME_FIELD(MbdcpXlaErrorArgs, message, XLA_FFI_Error_Create_Args, message);
SAME_FIELD(MbdcpXlaErrorArgs, errc, XLA_FFI_Error_Create_Args, errc);
_Static_assert(MBDCP_XLA_ERROR_ARGS_SIZE == XLA_FFI_Error_Create_Args_STRUCT_SIZE, "error args size");

SAME_FIELD(MbdcpXlaApi, api_version, XLA_FFI_Api, api_version);
SAME_FIELD(MbdcpXlaApi, internal_api, XLA_FFI_Api, internal_api);
SAME_FIELD(MbdcpXlaApi, error_create, XLA_FFI_Api, XLA_FFI_Error_Create);

SAME_SIZE(MbdcpXlaBuffer, XLA_FFI_Buffer);
SAME_FIELD(MbdcpXlaBuffer, dtype, XLA_FFI_Buffer, dtype);
SAME_FIELD(MbdcpXlaBuffer, data, XLA_FFI_Buffer, data);
SAME_FIELD(MbdcpXlaBuffer, rank, XLA_FFI_Buffer, rank);
SAME_FIELD(MbdcpXlaBuffer, dims, XLA_FFI_Buffer, dims);
_Static_assert(MBDCP_XLA_BUFFER_SIZE == XLA_FFI_Buffer_STRUCT_SIZE, "buffer size");

SAME_SIZE(MbdcpXlaByteSpan, XLA_FFI_ByteSpan);
SAME_FIELD(MbdcpXlaByteSpan, len, XLA_FFI_ByteSpan, len);
SAME_SIZE(MbdcpXlaScalar, XLA_FFI_Scalar);
SAME_FIELD(MbdcpXlaScalar, value, XLA_FFI_Scalar, value);

SAME_SIZE(MbdcpXlaArgs, XLA_FFI_Args);
SAME_FIELD(MbdcpXlaArgs, size, XLA_FFI_Args, size);
SAME_FIELD(MbdcpXlaArgs, types, XLA_FFI_Args, types);
SAME_FIELD(MbdcpXlaArgs, args, XLA_FFI_Args, args);
SAME_SIZE(MbdcpXlaRets, XLA_FFI_Rets);
SAME_FIELD(MbdcpXlaRets, rets, XLA_FFI_Rets, rets);
SAME_SIZE(MbdcpXlaAttrs, XLA_FFI_Attrs);
SAME_FIELD(MbdcpXlaAttrs, types, XLA_FFI_Attrs, types);
SAME_FIELD(MbdcpXlaAttrs, names, XLA_FFI_Attrs, names);
SAME_FIELD(MbdcpXlaAttrs, attrs, XLA_FFI_Attrs, attrs);
/* the enums behind the types arrays are read as ints */
_Static_assert(sizeof(XLA_FFI_ArgType) == sizeof(int) && sizeof(XLA_FFI_AttrType) == sizeof(int) &&
                   sizeof(XLA_FFI_DataType) == sizeof(int) && sizeof(XLA_FFI_ExecutionStage) == sizeof(int),
               "enums are ints");

SAME_SIZE(MbdcpXlaCallFrame, XLA_FFI_CallFrame);
SAME_FIELD(MbdcpXlaCallFrame, api, XLA_FFI_CallFrame, api);
SAME_FIELD(MbdcpXlaCallFrame, stage, XLA_FFI_CallFrame, stage);
SAME_FIELD(MbdcpXlaCallFrame, args, XLA_FFI_CallFrame, args);
SAME_FIELD(MbdcpXlaCallFrame, rets, XLA_FFI_CallFrame, rets);
SAME_FIELD(MbdcpXlaCallFrame, attrs, XLA_FFI_CallFrame, attrs);
SAME_FIELD(MbdcpXlaCallFrame, future, XLA_FFI_CallFrame, future);
_Static_assert(MBDCP_XLA_CALL_FRAME_SIZE == XLA_FFI_CallFrame_STRUCT_SIZE, "call frame size");

SAME_SIZE(MbdcpXlaMetadata, XLA_FFI_Metadata);
SAME_FIELD(MbdcpXlaMetadata, api_version, XLA_FFI_Metadata, api_version);
SAME_FIELD(MbdcpXlaMetadata, traits, XLA_FFI_Metadata, traits);
SAME_FIELD(MbdcpXlaMetadata, state_type_id, XLA_FFI_Metadata, state_type_id);
_Static_assert(MBDCP_XLA_METADATA_SIZE == XLA_FFI_Metadata_STRUCT_SIZE, "metadata size");
SAME_SIZE(MbdcpXlaMetadataExtension, XLA_FFI_Metadata_Extension);
SAME_FIELD(MbdcpXlaMetadataExtension, metadata, XLA_FFI_Metadata_Extension, metadata);
_Static_assert(MBDCP_XLA_METADATA_EXTENSION_SIZE == XLA_FFI_Metadata_Extension_STRUCT_SIZE, "metadata extension size");
