"""Build of mbdcp's one extension module: mbdcp/infrastructure/_core.pyx plus the C99 core in csrc/."""
import os
import shutil
import types
from concurrent.futures import ThreadPoolExecutor
from glob import glob

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
CYTHON_DIRECTIVES = {"language_level": 3}


class BuildExtAlsoInSource(build_ext):
    """Build the extensions: translate the .pyx files when their C is out of date, compile the C
    sources of an extension in parallel, and also copy the compiled modules into the source tree's
    mbdcp/.

    `pip install . && python -m mbdcp demo` run from the repository root imports the
    package from the source tree (the current directory comes first on sys.path), which
    without this copy has no compiled extension.

    pip builds in the source tree (build/ holds the objects) but in a new isolated environment each
    time, whose Cython and NumPy .pxd files are newer than any C made before: Cython would translate
    again and every source compile again at each `pip install`. The C of a .pyx is out of date here
    when the project's own Cython files or this file are newer (or with --force); an extension is
    rebuilt when a source, a header of csrc/ or mbdcp/infrastructure/xla/, csrc/build.txt or this
    file is newer than the module built."""

    def run(self):
        for ext in self.extensions:
            self._translate(ext)
        super().run()
        if self.inplace:
            return
        for ext in self.extensions:
            built = self.get_ext_fullpath(ext.name)
            package_dir = os.path.join(HERE, *ext.name.split(".")[:-1])
            if os.path.isfile(built) and os.path.isdir(package_dir):
                shutil.copyfile(built, os.path.join(package_dir, os.path.basename(built)))

    def _translate(self, ext):
        pyx = [s for s in ext.sources if s.endswith(".pyx")]
        own = ["setup.py"] + [f for p in pyx for kind in ("pyx", "pxd", "pxi") for f in glob(os.path.dirname(p) + "/*." + kind)]
        newest = max(os.path.getmtime(f) for f in own)
        if self.force or any(not os.path.isfile(p[:-4] + ".c") or os.path.getmtime(p[:-4] + ".c") < newest for p in pyx):
            ext.sources = cythonize([ext], force=True, compiler_directives=CYTHON_DIRECTIVES)[0].sources
        else:
            ext.sources = [s[:-4] + ".c" if s.endswith(".pyx") else s for s in ext.sources]

    def build_extensions(self):
        if self.compiler.compiler_type == "unix":
            self.compiler.compile = types.MethodType(_compile_in_parallel, self.compiler)
        super().build_extensions()


def _compile_in_parallel(self, sources, output_dir=None, macros=None, include_dirs=None, debug=False,
                         extra_preargs=None, extra_postargs=None, depends=None):
    """CCompiler.compile with one source per core at a time, the largest first (the C of the .pyx)."""
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(output_dir, macros, include_dirs, sources,
                                                                          depends, extra_postargs)
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)

    def one(obj):
        src, ext = build[obj]
        self._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

    todo = sorted((obj for obj in objects if obj in build), key=lambda obj: -os.path.getsize(build[obj][0]))
    with ThreadPoolExecutor(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()) as pool:
        list(pool.map(one, todo))
    return objects


def build_conf(key):
    """The words of ``key`` in csrc/build.txt, the C core's one build description (the C tests and
    CI read it too)."""
    with open(os.path.join(HERE, "csrc", "build.txt")) as f:
        for line in f:
            name, sep, words = line.partition("=")
            if sep and not line.startswith("#") and name.strip() == key:
                return words.split()
    raise KeyError(f"csrc/build.txt has no {key}")


C_FLAGS, LINK_FLAGS = build_conf("RELEASE_FLAGS"), build_conf("LINK_FLAGS")
# what a rebuild of an extension depends on besides its sources
DEPENDS = [*sorted(glob("csrc/include/mbdcp/*.h")), *sorted(glob("csrc/src/*.h")), "csrc/build.txt", "setup.py"]

core = Extension(
    "mbdcp.infrastructure._core",
    sources=["mbdcp/infrastructure/_core.pyx", *sorted(glob("csrc/src/*.c"))],
    include_dirs=["csrc/include", numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    extra_compile_args=C_FLAGS,
    extra_link_args=LINK_FLAGS,
    depends=DEPENDS,
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
    depends=[*DEPENDS, *sorted(glob(XLA + "*.h"))],
    optional=True,
)

setup(
    ext_modules=[core, xla],
    cmdclass={"build_ext": BuildExtAlsoInSource},
)
