"""End-to-end tour: a hierarchy on disk, written, read back, inspected (also with the
``zarrkit`` command-line tool).

Run with ``make demo``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import zarrkit as zarr


def zarrkit_cli(*args: str, cwd: Path) -> int:
    """Run ``zarrkit ARGS...`` (as ``python -m zarrkit``) in ``cwd`` and print what it prints."""
    print(f"$ zarrkit {' '.join(args)}")
    proc = subprocess.run([sys.executable, "-m", "zarrkit", *args], cwd=cwd, capture_output=True, text=True,
                          check=False)
    print(proc.stdout, end="")
    print(proc.stderr, end="", file=sys.stderr)
    return proc.returncode


def main() -> None:
    root_dir = Path(tempfile.mkdtemp(prefix="zarrkit-demo-")) / "example.zarr"
    try:
        root = zarr.open_group(str(root_dir), mode="w")
        root.attrs["title"] = "zarrkit demo"

        # an array in a sub-group, chunked and Blosc-compressed (Zarr v3, the default format)
        climate = root.create_group("climate")
        temp = climate.zeros("temperature", shape=(365, 180, 360), chunks=(30, 90, 90), dtype="f4")
        rng = np.random.default_rng(0)
        data = (15 + 10 * rng.standard_normal(temp.shape)).astype("f4")
        temp[:] = data
        temp.attrs["units"] = "degC"

        # a sharded array: 32x32 inner chunks, stored 4x4 to a shard object
        images = root.create_group("images")
        img = zarr.create_array(images.store, name="images/stack", shape=(256, 256),
                                chunks=(32, 32), shards=(128, 128), dtype="u2")
        img[:] = np.arange(256 * 256, dtype="u2").reshape(256, 256)

        # read back through a fresh handle
        again = zarr.open(str(root_dir), mode="r")
        t = again["climate/temperature"]
        assert np.array_equal(t[:], data)
        assert np.array_equal(again["images/stack"][100:110, 5], img[100:110, 5])
        print(f"mean temperature, day 0: {t[0].mean():.2f} {t.attrs['units']}")
        print(t.info)
        print(again["images/stack"].info)
        print(again.tree())

        zarr.consolidate_metadata(str(root_dir))
        fast = zarr.open_consolidated(str(root_dir))
        names: list[str] = []
        fast.visitkeys(names.append)
        print("consolidated hierarchy:", names)

        # the same store from the command line: an array's info, the tree, a check of every chunk
        here = root_dir.parent
        if zarrkit_cli("info", "example.zarr/climate/temperature", cwd=here) != 0:
            raise SystemExit("zarrkit info failed")
        if zarrkit_cli("tree", "example.zarr", cwd=here) != 0:
            raise SystemExit("zarrkit tree failed")
        if zarrkit_cli("verify", "example.zarr", cwd=here) != 0:  # exit 1 would mean corrupt chunks
            raise SystemExit("zarrkit verify found a problem")
    finally:
        shutil.rmtree(root_dir.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
