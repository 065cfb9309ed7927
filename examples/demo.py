"""End-to-end tour: a hierarchy on disk, written, read back, inspected (also with the
``zarrkit`` command-line tool).

Run with ``make demo``; ``--small`` (or ``ZARRKIT_EXAMPLES_SMALL=1``) uses small arrays.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import zarrkit as zarr

SMALL = "--small" in sys.argv[1:] or os.environ.get("ZARRKIT_EXAMPLES_SMALL") == "1"


def heading(title: str, first: bool = False) -> None:
    """Print a section heading, after a blank line unless it is the first."""
    if not first:
        print()
    print(f"== {title} ==")


def zarrkit_cli(*args: str, cwd: Path) -> int:
    """Run ``zarrkit ARGS...`` (as ``python -m zarrkit``) in ``cwd`` and print what it prints."""
    print(f"$ zarrkit {' '.join(args)}")
    proc = subprocess.run([sys.executable, "-m", "zarrkit", *args], cwd=cwd, capture_output=True,
                          text=True, check=False)
    print(proc.stdout, end="")
    print(proc.stderr, end="", file=sys.stderr)
    return proc.returncode


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="zarrkit-demo-"))
    root_dir = workdir / "example.zarr"
    days, lat, lon = (30, 18, 36) if SMALL else (365, 180, 360)
    chunks = (10, 9, 18) if SMALL else (30, 90, 90)
    try:
        heading("Writing a hierarchy", first=True)
        root = zarr.open_group(str(root_dir), mode="w")
        root.attrs["title"] = "zarrkit demo"

        # an array in a sub-group, chunked and Blosc-compressed (Zarr v3, the default format)
        climate = root.create_group("climate")
        temp = climate.create_array("temperature", shape=(days, lat, lon),
                                    chunks=chunks, dtype="f4", fill_value=0,
                                    compressors=zarr.codecs.BloscCodec(cname="lz4"))
        rng = np.random.default_rng(0)
        data = (15 + 10 * rng.standard_normal(temp.shape)).astype("f4")
        temp[:] = data
        temp.attrs["units"] = "degC"

        # a sharded array: 32x32 inner chunks, stored 4x4 to a shard object
        images = root.create_group("images")
        img = images.create_array("stack", shape=(256, 256), chunks=(32, 32),
                                  shards=(128, 128), dtype="u2")
        img[:] = np.arange(256 * 256, dtype="u2").reshape(256, 256)
        print(f"wrote {temp.path} {temp.shape} and {img.path} {img.shape} in {root_dir.name}")

        heading("Reading it back through a fresh handle")
        again = zarr.open(str(root_dir), mode="r")
        t = again["climate/temperature"]
        assert np.array_equal(t[:], data)
        assert np.array_equal(again["images/stack"][100:110, 5], img[100:110, 5])
        print(f"mean temperature, day 0: {t[0].mean():.2f} {t.attrs['units']}")

        heading("climate/temperature: .info")
        print(t.info)
        heading("images/stack (sharded): .info")
        print(again["images/stack"].info)
        heading("The hierarchy: .tree()")
        print(str(again.tree()).rstrip("\n"))

        # Consolidated metadata (one document holding the metadata of every node) is a Zarr v2
        # convention; the v3 specification does not have it yet, so consolidating a v3
        # hierarchy warns, as zarr-python does.  A v2 copy of the climate group is consolidated.
        heading("Consolidated metadata (a Zarr v2 copy of the climate group)")
        v2_dir = workdir / "climate-v2.zarr"
        v2 = zarr.open_group(str(v2_dir), mode="w", zarr_format=2)
        zarr.copy_all(again["climate"], v2)
        zarr.consolidate_metadata(str(v2_dir))
        fast = zarr.open_consolidated(str(v2_dir))
        names: list[str] = []
        fast.visitkeys(names.append)
        print("consolidated hierarchy:", names, "format", fast.metadata.zarr_format)

        # the same store from the command line: an array's info, the tree, a check of every chunk
        heading("The same store from the command line")
        if zarrkit_cli("info", "example.zarr/climate/temperature", cwd=workdir) != 0:
            raise SystemExit("zarrkit info failed")
        print()
        if zarrkit_cli("tree", "example.zarr", cwd=workdir) != 0:
            raise SystemExit("zarrkit tree failed")
        print()
        if zarrkit_cli("verify", "example.zarr", cwd=workdir) != 0:  # exit 1: corrupt chunks
            raise SystemExit("zarrkit verify found a problem")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
