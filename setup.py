"""Build of mbdcp's one extension module: mbdcp/_core.pyx plus the C99 core in csrc/."""
from glob import glob

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

core = Extension(
    "mbdcp._core",
    sources=["mbdcp/_core.pyx", *sorted(glob("csrc/src/*.c"))],
    include_dirs=["csrc/include", numpy.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    extra_compile_args=["-std=c99", "-O3"],
)

setup(ext_modules=cythonize([core], compiler_directives={"language_level": 3}))
