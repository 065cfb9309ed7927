"""zarr-python 3's error constructors and names: one argument is the message, several fill the
class's message template; ``path=`` names the path at fault."""

from __future__ import annotations

import warnings

import pytest

import zarrkit
from zarrkit import errors


def test_one_argument_is_the_message_and_path_is_a_keyword():
    err = errors.GroupNotFoundError("nothing here", path="a/b")
    assert str(err) == "nothing here" and err.path == "a/b"
    assert isinstance(err, FileNotFoundError) and isinstance(err, KeyError) and isinstance(err, ValueError)


@pytest.mark.parametrize(("cls", "start"), [
    (errors.GroupNotFoundError, "No group found in store 'S' at path 'p'"),
    (errors.ArrayNotFoundError, "No array found in store 'S' at path 'p'"),
    (errors.ContainsGroupError, "A group exists in store 'S' at path 'p'."),
    (errors.ContainsArrayError, "An array exists in store 'S' at path 'p'."),
])
def test_two_arguments_fill_the_template(cls, start):
    err = cls("S", "p")
    assert str(err) == start and err.path == "p"


def test_the_base_classes_keep_message_and_path():
    err = errors.NodeNotFoundError("gone", "x")
    assert str(err) == "gone" and err.path == "x"
    err2 = errors.NodeExistsError("there", "y")
    assert str(err2) == "there" and err2.path == "y"


def test_array_and_group_documents_together():
    err = errors.ContainsArrayAndGroupError("S", "p")
    assert "'S'" in str(err) and ".zarray" in str(err) and err.path == "p"
    assert isinstance(err, errors.MetadataError)


def test_metadata_validation_error_takes_name_expected_got():
    err = errors.MetadataValidationError("zarr_format", 3, 4)
    assert str(err) == "Invalid value for 'zarr_format'. Expected '3'. Got '4'."
    assert errors.MetadataValidationError is errors.MetadataError
    assert str(errors.MetadataError("bad", "a/.zarray")) == "a/.zarray: bad"
    assert issubclass(errors.NodeTypeValidationError, errors.MetadataError)


def test_zarr3_names_exist_with_their_builtin_bases():
    assert issubclass(errors.UnsupportedDtypeError, errors.DataTypeValidationError)
    assert issubclass(errors.ZarrDeprecationWarning, DeprecationWarning)
    assert issubclass(errors.ZarrUserWarning, UserWarning)
    assert issubclass(errors.UnstableSpecificationWarning, FutureWarning)
    assert issubclass(errors.ZarrRuntimeWarning, RuntimeWarning)
    assert errors.BaseZarrError is errors.ZarrkitError
    assert issubclass(errors.ChunkNotFoundError, ValueError)


def test_opening_a_missing_group_says_so_as_zarr_python_3_does(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"No group found in store DirectoryStore\(.*\) at path ''"):
        zarrkit.open_group(str(tmp_path / "none"), mode="r")


def test_get_array_and_get_group_name_what_they_found():
    g = zarrkit.create_group({})
    g.create_group("sub")
    g.create_array("arr", shape=(2,), dtype="i1")
    with pytest.raises(errors.ArrayNotFoundError, match="No array found in store .* at path 'missing'"):
        g.get_array("missing")
    with pytest.raises(errors.GroupNotFoundError, match="No group found in store .* at path 'missing'"):
        g.get_group("missing")
    with pytest.raises(errors.ContainsGroupError, match="A group exists in store .* at path 'sub'"):
        g.get_array("sub")
    with pytest.raises(errors.ContainsArrayError, match="An array exists in store .* at path 'arr'"):
        g.get_group("arr")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert g.get_group("sub").path == "sub" and g.get_array("arr").path == "arr"
