"""mbdcp's C solvers as XLA FFI handlers (custom calls of jitted JAX programs), built without JAX:
the handlers as the capsules jax.ffi.register_ffi_target takes, and the FFI version they were built
for. The handlers' C (mbdcp/infrastructure/xla/) belongs to this binding: like _core.pyx, it owns
the memory the C core works in."""
from cpython.pycapsule cimport PyCapsule_New


cdef extern from "xla_ffi_abi.h":
    int MBDCP_XLA_FFI_MAJOR
    int MBDCP_XLA_FFI_MINOR
    ctypedef struct MbdcpXlaCallFrame:
        pass
    ctypedef struct MbdcpXlaError:
        pass

cdef extern from "lemke_ffi.h":
    MbdcpXlaError *mbdcp_xla_lemke(MbdcpXlaCallFrame *frame)

cdef extern from "step_ffi.h":
    MbdcpXlaError *mbdcp_xla_step(MbdcpXlaCallFrame *frame)

FFI_VERSION = (MBDCP_XLA_FFI_MAJOR, MBDCP_XLA_FFI_MINOR)


def lemke_handler():
    """The XLA FFI handler of Lemke's method (a capsule for jax.ffi.register_ffi_target)."""
    return PyCapsule_New(<void *>mbdcp_xla_lemke, NULL, NULL)


def step_handler():
    """The XLA FFI handler of one plain time step, mbdcp_step_solve (a capsule for
    jax.ffi.register_ffi_target)."""
    return PyCapsule_New(<void *>mbdcp_xla_step, NULL, NULL)
