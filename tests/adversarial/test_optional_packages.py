"""A codec whose implementation needs an optional package (``zfp`` needs zfpy, the numcodecs
``zfpy`` and ``pcodec`` codecs their packages) is checked when an array is created: without
the package, creation fails with the install command before any metadata is written, instead
of at the first write, after it.

Each case runs in a child process in which importing the package fails (``sys.modules[name] =
None`` before zarrkit is imported), as it does where the package is not installed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import json, sys
    sys.modules[sys.argv[1]] = None  # the package is missing
    import zarrkit
    from zarrkit.codecs.zfp import ZfpCodec
    from zarrkit.errors import MetadataError
    case = sys.argv[2]
    store = {}
    args = dict(shape=(8, 8), chunks=(4, 4), dtype="f4")
    try:
        if case == "zfp serializer":
            zarrkit.create_array(store, serializer=ZfpCodec("reversible"), **args)
        elif case == "zfp in json":
            zarrkit.create_array(store, serializer={"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": 8}}, **args)
        elif case == "zfp inside a shard":
            zarrkit.create_array(store, shards=(8, 8), serializer=ZfpCodec("reversible"), **args)
        elif case == "zfp in a codecs list":
            zarrkit.create(store=store, zarr_format=3, codecs=[{"name": "zfp", "configuration": {"mode": "reversible"}}], **args)
        elif case == "numcodecs zfpy, v2":
            zarrkit.create(store=store, zarr_format=2, compressor={"id": "zfpy", "mode": 4}, **args)
        elif case == "numcodecs pcodec, v2":
            zarrkit.create(store=store, zarr_format=2, compressor={"id": "pcodec"}, **args)
        elif case == "zfp in a group":
            g = zarrkit.group(store=store, zarr_format=3)
            before = sorted(store)
            try:
                g.create_array("a", serializer=ZfpCodec("reversible"), **args)
            finally:
                store = {k: v for k, v in store.items() if k not in before}
    except MetadataError as exc:
        print(json.dumps({"error": type(exc).__name__, "message": str(exc), "keys": sorted(store)}))
    else:
        print(json.dumps({"error": None, "keys": sorted(store)}))
""")

CASES = {
    "zfp serializer": ("zfpy", "zarrkit[zfpy]"),
    "zfp in json": ("zfpy", "zarrkit[zfpy]"),
    "zfp inside a shard": ("zfpy", "zarrkit[zfpy]"),
    "zfp in a codecs list": ("zfpy", "zarrkit[zfpy]"),
    "zfp in a group": ("zfpy", "zarrkit[zfpy]"),
    "numcodecs zfpy, v2": ("zfpy", "zarrkit[zfpy]"),
    "numcodecs pcodec, v2": ("pcodec", "zarrkit[pcodec]"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_creation_without_the_package_writes_nothing_and_says_what_to_install(case):
    package, extra = CASES[case]
    proc = subprocess.run([sys.executable, "-c", CHILD, package, case], check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-800:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["keys"] == [], f"written before the refusal: {result['keys']}"
    assert result["error"] == "UnknownCodecError", result
    assert f"needs the {package} package (pip install '{extra}')" in result["message"]
