# What type checkers see of cthreads/widths.py: a width type is its plain type. In a kernel
# `v: float32 = a * b` stores a float into a float32 local (rounding, as the compiler does);
# in plain Python the width types are subclasses of float and int whose arithmetic gives plain
# floats and ints. Checkers treat both spellings alike, so either is accepted wherever the
# kernel language accepts it.
float32 = float
float64 = float
int32 = int
int64 = int
uint32 = int

WIDTH_TYPES: dict[type, str]

__all__ = ["float32", "float64", "int32", "int64", "uint32", "WIDTH_TYPES"]
