"""Build of mbdcp's one extension module: mbdcp/infrastructure/_core.pyx plus the C99 core in csrc/."""
import os
import shutil
from glob import glob

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildExtAlsoInSource(build_ext):
    """Also copy the compiled module into the source tree's mbdcp/.

    `pip install . && python -m mbdcp demo` run from the repository root imports the
    package from the source tree (the current directory comes first on sys.path), which
    without this copy has no compiled extension."""

    def run(self):
        super().run()
        if self.inplace:
            return
        here = os.path.dirname(os.path.abspath(__file__))
        for ext in self.extensions:
            built = self.get_ext_fullpath(ext.name)
            package_dir = os.path.join(here, *ext.name.split(".")[:-1])
            if os.path.isfile(built) and os.path.isdir(package_dir):
                shutil.copyfile(built, os.path.join(package_dir, os.path.basename(built)))


def build_conf(key):
    """The words of ``key`` in csrc/build.txt, the C core's one build description (the C tests and
    CI read it too)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc", "build.txt")) as f:
        for line in f:
            name, sep, words = line.partition("=")
            if sep and not line.startswith("#") and name.strip() == key:
                return words.split()
    raise KeyError(f"csrc/build.txt has no {key}")


C_FLAGS, LINK_FLAGS = build_conf("RELEASE_FLAGS"), build_conf("LINK_FLAGS")

core = Extension(
    "mbdcp.infrastructure._core",
    sources=["mbdcp/infrastructure/_core.pyx", *sorted(glob("csrc/src/*.c"))],
    include_dirs=["csrc/include", numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    extra_compile_args=C_FLAGS,
    extra_link_args=LINK_FLAGS,
)

# Lemke's method and the plain time step as XLA FFI handlers, for mbdcp.jax under jax.jit: the
# binding's C (mbdcp/infrastructure/xla/, which owns the memory the core works in, as _core.pyx does)
# against our own declaration of XLA's FFI interface (xla_ffi_abi.h), so it builds without JAX (pip
# builds in an isolated environment); optional: without it mbdcp.jax solves through host callbacks.
XLA = "mbdcp/infrastructure/xla/"
xla = Extension(
    "mbdcp.infrastructure._xla",
    sources=["mbdcp/infrastructure/_xla.pyx", *(XLA + f + ".c" for f in build_conf("XLA_HANDLERS")),
             *("csrc/src/" + f + ".c" for f in build_conf("XLA_CORE"))],
    include_dirs=["csrc/include", XLA],
    extra_compile_args=C_FLAGS,
    extra_link_args=LINK_FLAGS,
    optional=True,
)

setup(
    ext_modules=cythonize([core, xla], compiler_directives={"language_level": 3}),
    cmdclass={"build_ext": BuildExtAlsoInSource},
)
