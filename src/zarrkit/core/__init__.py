"""The chunk engine and the node classes.  ``zarrkit.core.Array`` is zarr-python 2's path."""


def __getattr__(name: str):
    # Lazy, so importing a submodule (e.g. core.indexing) does not pull in the whole engine.
    if name == "Array":
        from .array import Array

        return Array
    if name == "Group":
        from .group import Group

        return Group
    raise AttributeError(name)
