# A kernel header's text with %globaltimer marks put in by exact replacements (each must match):
# the *_marks.py scripts of bench/phases build their marked copies with it.
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
TIMER = ('__device__ unsigned long long prof_t[64];\n'
         '__device__ __forceinline__ unsigned long long gt(){unsigned long long t; '
         'asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t;}\n')


class Marked:
    def __init__(self, header):
        self.text = (ROOT / header).read_text()

    def rep(self, old, new):
        assert old in self.text, old
        self.text = self.text.replace(old, new)

    def write(self, path):
        pathlib.Path(path).write_text(self.text)
