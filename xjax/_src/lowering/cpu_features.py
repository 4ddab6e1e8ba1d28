"""Facts about the host CPU that choose how a module compiles for it."""

from __future__ import annotations

import functools


@functools.cache
def native_wide_vectors() -> bool:
    """Whether the host runs AVX-512 on 512-bit wide units: AMD processors from Zen 5
    (family 0x1A). XLA's CPU kernels use 8-lane float32 vectors by default, as on CPUs that
    split 512-bit operations in two or slow their clock for them; on these 16 lanes run
    elementwise work up to twice as fast. False where /proc/cpuinfo cannot be read.

    Examples
    --------
    >>> from xjax._src.lowering.cpu_features import native_wide_vectors
    >>> native_wide_vectors() in (True, False)
    True
    """
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("vendor_id", "cpu family", "flags") and key not in fields:
                    fields[key] = value.strip()
                if not line.strip() and fields:  # the first processor's block has them all
                    break
    except OSError:
        return False
    try:
        family = int(fields.get("cpu family", "0"))
    except ValueError:
        return False
    return (fields.get("vendor_id") == "AuthenticAMD" and family >= 0x1A
            and "avx512f" in fields.get("flags", "").split())
