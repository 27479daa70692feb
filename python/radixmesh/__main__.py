"""python3 -m radixmesh info: what `radixmesh info` prints (the CLI installed beside the library,
or on the PATH); python3 -m radixmesh version: the library's version."""
import os
import shutil
import subprocess
import sys


def main(argv):
    if argv[:1] == ["version"]:
        import radixmesh
        print(radixmesh.version())
        return 0
    here = os.path.dirname(os.path.abspath(__file__))
    beside = os.path.normpath(os.path.join(here, "..", "..", "..", "..", "bin", "radixmesh"))
    cli = beside if os.path.exists(beside) else shutil.which("radixmesh")
    if not cli:
        print("radixmesh: the radixmesh command is not installed beside the library nor on the PATH. "
              "fix: install radixmesh (cmake --install) or add its bin folder to PATH", file=sys.stderr)
        return 4
    return subprocess.call([cli] + (argv or ["info"]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
