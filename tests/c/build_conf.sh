# Sourced by the C test scripts: conf KEY prints the words of KEY in csrc/build.txt.
conf() {
    sed -n "s/^$1 *= *//p" csrc/build.txt
}
