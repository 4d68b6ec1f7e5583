/*
 * module.c - mbdcp.infrastructure._xla: hands mbdcp's XLA FFI handlers to Python, as the
 * capsules jax.ffi.register_ffi_target takes, with the FFI version they were built for.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "lemke_ffi.h"
#include "step_ffi.h"

static PyObject *lemke_handler(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyCapsule_New((void *)&mbdcp_xla_lemke, NULL, NULL);
}

static PyObject *step_handler(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyCapsule_New((void *)&mbdcp_xla_step, NULL, NULL);
}

static PyMethodDef methods[] = {
    {"lemke_handler", lemke_handler, METH_NOARGS,
     "lemke_handler()\n--\n\nThe XLA FFI handler of Lemke's method (a capsule for jax.ffi.register_ffi_target)."},
    {"step_handler", step_handler, METH_NOARGS,
     "step_handler()\n--\n\nThe XLA FFI handler of one plain time step, mbdcp_step_solve (a capsule for "
     "jax.ffi.register_ffi_target)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_xla",
    "mbdcp's C solvers as XLA FFI handlers (custom calls of jitted JAX programs), built without JAX.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__xla(void)
{
    PyObject *m = PyModule_Create(&module);
    PyObject *version = Py_BuildValue("(ii)", MBDCP_XLA_FFI_MAJOR, MBDCP_XLA_FFI_MINOR);
    if (!m || !version || PyModule_AddObjectRef(m, "FFI_VERSION", version) < 0) {
        Py_XDECREF(version);
        Py_XDECREF(m);
        return NULL;
    }
    Py_DECREF(version);
    return m;
}
