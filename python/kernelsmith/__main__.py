"""python -m kernelsmith ...: the same as the `kernelsmith` command."""

from kernelsmith._launch import main

main()
