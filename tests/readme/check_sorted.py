#!/usr/bin/env python3
"""Checks a `radixmesh sort` output against its input, without numpy: the output is the input
reordered, in radixmesh's key order (-inf < ... < -0.0 < +0.0 < ... < +inf < NaN; descending is the
exact reverse), and, with values that are the input indices 0..n-1, the values say where each key
came from and equal keys keep their input order (stable).

  check_sorted.py KEYS_IN KEYS_OUT TYPE [--desc] [--values-out IDS_OUT]
"""
import argparse
import array
import ast
import struct
import sys

TYPES = {  # radixmesh type -> (array typecode, bytes, kind)
    "u8": ("B", 1, "u"), "u16": ("H", 2, "u"), "u32": ("I", 4, "u"), "u64": ("Q", 8, "u"),
    "i8": ("b", 1, "i"), "i16": ("h", 2, "i"), "i32": ("i", 4, "i"), "i64": ("q", 8, "i"),
    "f32": ("I", 4, "f"), "f64": ("Q", 8, "f"),
}
NPY_TYPES = {"|u1": "u8", "<u2": "u16", "<u4": "u32", "<u8": "u64", "|i1": "i8", "<i2": "i16",
             "<i4": "i32", "<i8": "i64", "<f4": "f32", "<f8": "f64"}


def load(path, type_name):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".npy"):
        if data[:6] != b"\x93NUMPY":
            sys.exit(f"{path}: no .npy magic")
        length_bytes = 2 if data[6] == 1 else 4
        length = int.from_bytes(data[8:8 + length_bytes], "little")
        header = ast.literal_eval(data[8 + length_bytes:8 + length_bytes + length].decode("latin-1"))
        npy_type = NPY_TYPES.get(header["descr"])
        if npy_type != type_name:
            sys.exit(f"{path}: dtype {header['descr']}, expected {type_name}")
        data = data[8 + length_bytes + length:]
    code, size, _ = TYPES[type_name]
    if len(data) % size:
        sys.exit(f"{path}: {len(data)} bytes is not a whole number of {type_name}")
    values = array.array(code)
    values.frombytes(data)
    return values


def order_key(type_name):
    _, size, kind = TYPES[type_name]
    if kind != "f":
        return lambda x: x
    bits = 8 * size
    sign = 1 << (bits - 1)
    mask = (1 << bits) - 1
    exponent_mask = {4: 0x7F800000, 8: 0x7FF0000000000000}[size]
    mantissa_mask = {4: 0x007FFFFF, 8: 0x000FFFFFFFFFFFFF}[size]

    def key(u):
        if (u & exponent_mask) == exponent_mask and (u & mantissa_mask):
            return mask + 1  # NaN: above +inf
        return u ^ sign if not u & sign else ~u & mask
    return key


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("keys_in")
    parser.add_argument("keys_out")
    parser.add_argument("type", choices=sorted(TYPES))
    parser.add_argument("--desc", action="store_true")
    parser.add_argument("--values-out")
    a = parser.parse_args()
    keys_in, keys_out = load(a.keys_in, a.type), load(a.keys_out, a.type)
    if len(keys_in) != len(keys_out):
        sys.exit(f"{a.keys_out}: {len(keys_out)} keys, the input has {len(keys_in)}")
    key = order_key(a.type)
    ranks = [key(x) for x in keys_out]
    for i in range(1, len(ranks)):
        if (ranks[i - 1] < ranks[i]) if a.desc else (ranks[i - 1] > ranks[i]):
            sys.exit(f"{a.keys_out}: out of order at element {i}")
    if a.values_out:
        ids = load(a.values_out, "u32")
        if sorted(ids) != list(range(len(keys_in))):
            sys.exit(f"{a.values_out}: not a permutation of the input indices")
        for i, (k, source) in enumerate(zip(keys_out, ids)):
            if keys_in[source] != k:
                sys.exit(f"{a.values_out}: element {i} says key {source}, which is not the key at {i}")
            if i and ranks[i - 1] == ranks[i] and ids[i - 1] > source:
                sys.exit(f"{a.keys_out}: equal keys out of input order at element {i} (not stable)")
    elif sorted(keys_in, key=key) != sorted(keys_out, key=key):
        sys.exit(f"{a.keys_out}: not a permutation of {a.keys_in}")
    print(f"{a.keys_out}: {len(keys_out)} {a.type} keys in order")


if __name__ == "__main__":
    main()
