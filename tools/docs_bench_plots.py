"""The benchmark report's plots (``benchmarks/*.png``, written beside ``RESULTS.md``) are
published at the site's root, beside the results page that includes the report, so that the
report's image links resolve on the site as they do in the repository."""

from __future__ import annotations

import glob
import os
from typing import Any

from mkdocs.structure.files import File, Files


def on_files(files: Files, config: Any, **kwargs: object) -> Files:
    root = os.path.dirname(os.path.abspath(config["config_file_path"]))
    for path in sorted(glob.glob(os.path.join(root, "benchmarks", "*.png"))):
        files.append(File(os.path.basename(path), src_dir=os.path.dirname(path),
                          dest_dir=config["site_dir"], use_directory_urls=config["use_directory_urls"]))
    return files
